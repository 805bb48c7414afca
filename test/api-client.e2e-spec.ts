import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../src/openapi/write-document.js';
import { startApp, type TestApp } from './helpers/app.js';

/**
 * The web front end talks to the API only through web/src/api/schema.d.ts, generated from the service's
 * own OpenAPI document by `npm run api:client`. When the API changes and the client is not regenerated,
 * this fails, so a page cannot drift from the API.
 */
describe('the generated API client of the web front end', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed' } });
  });
  afterAll(() => t?.close());

  it('is built from exactly the document the running service serves at /openapi.json', async () => {
    const served = (await t.http().get('/openapi.json').expect(200)).body as Record<string, unknown>;
    expect(await openApiDocument()).toEqual(served);
  });

  it('equals what openapi-typescript generates from that document today (run npm run api:client)', async () => {
    const generated =
      COMMENT_HEADER +
      astToString(await openapiTS((await openApiDocument()) as unknown as Parameters<typeof openapiTS>[0]));
    const committed = readFileSync(join(process.cwd(), 'web', 'src', 'api', 'schema.d.ts'), 'utf8');
    expect(committed === generated, 'web/src/api/schema.d.ts is stale: run `npm run api:client`').toBe(true);
  });
});
