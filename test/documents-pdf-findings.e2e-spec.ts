import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '../src/sdf/index.js';
import { actionPdf } from '../src/sdf/testing/pdf-actions.js';
import { signWithManifest } from '../src/sdf/testing/sign-manifest.js';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

const OPEN = 'PDF_OPEN_ACTION_URI: visual.pdf contacts https://tracker.example as soon as it is opened';
const PAGE = 'PDF_AUTO_ACTION_URI: visual.pdf contacts https://pixel.example without a click (additional action /O)';
const FILE = 'PDF_EMBEDDED_FILE: visual.pdf embeds the file "factur-x.xml" (10 bytes)';

describe('what visual.pdf does by itself: warnings of POST /validate and of the stored validation', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { VALIDATION_POOL_WORKERS: '1' } });
    tenant = await createTenant(t, { rate_limit_rpm: 10_000 });
  });
  afterAll(async () => {
    await t?.close();
  });

  const validateFile = (archive: Buffer) =>
    t.http().post('/validate').set('X-API-Key', tenant.apiKey).attach('file', archive, 'x.sdf');

  it.each([
    ['an /OpenAction that calls a URL', { openActionUri: 'https://tracker.example/open.gif?reader=42' }, OPEN],
    ['a page whose /AA calls a URL when it opens', { pageOpenUri: 'https://pixel.example/p?id=1' }, PAGE],
    [
      'an embedded file (a PDF/A-3 invoice with its XML)',
      { embeddedFile: { name: 'factur-x.xml', bytes: Buffer.from('<Invoice/>'), mimeType: 'text/xml' } },
      FILE,
    ],
  ])('POST /validate accepts a PDF with %s, and warns', async (_label, options, warning) => {
    const { archive } = await buildSdf({ pdf: await actionPdf(options) });
    const res = await validateFile(archive).expect(200);
    expect(res.body).toMatchObject({ valid: true, checks: { pdf: 'pass' } });
    expect(res.body.warnings).toEqual([warning]);
  });

  it('POST /validate says nothing of a link a person clicks', async () => {
    const { archive } = await buildSdf({ pdf: await actionPdf({ linkUri: 'https://example.com/terms' }) });
    expect((await validateFile(archive).expect(200)).body.warnings).toEqual([]);
  });

  it('an uploaded file keeps the warnings in its stored validation', async () => {
    const pdf = await actionPdf({
      openActionUri: 'https://tracker.example/open.gif',
      pageOpenUri: 'https://pixel.example/p',
      embeddedFile: { name: 'factur-x.xml', bytes: Buffer.from('<Invoice/>'), mimeType: 'text/xml' },
    });
    const { archive } = await buildSdf({ pdf });
    const uploaded = await upload(t, tenant.apiKey, archive).expect(201);
    const final = await waitForFinal(t, tenant.apiKey, uploaded.body.id);
    expect(final.body.status).toBe('valid');
    expect(final.body.validation.warnings).toEqual([OPEN, PAGE, FILE]);
  });

  it('POST /validate fails a signature whose signed_at is not a date, with its code and reason', async () => {
    const { archive } = await buildSdf();
    const key = generateKeyPair('ECDSA-P256');
    const signed = await signWithManifest(archive, key.privateKeyPem, { signed_at: '<b>x</b>' });
    const res = await validateFile(signed).expect(422);
    expect(res.body).toMatchObject({
      valid: false,
      checks: { pdf: 'pass', signature: 'fail' },
      error: {
        code: 'SDF_ERROR_INVALID_SIGNATURE',
        file: 'signature.sig',
        message:
          'signature.sig does not verify: signature.sig: signed_at must be an RFC 3339 date-time with a timezone offset',
      },
    });
    // The same file signed with a date passes: only signed_at made the difference.
    const dated = await signWithManifest(archive, key.privateKeyPem, {});
    expect((await validateFile(dated).expect(200)).body).toMatchObject({ valid: true, checks: { signature: 'pass' } });
  });
});
