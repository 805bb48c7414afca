import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { upload } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/** The files this process holds open whose path contains `part` (the service runs in this process). */
function openFilesWith(part: string): string[] {
  const found: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes(part)) found.push(target);
    } catch {
      // closed between the listing and the read
    }
  }
  return found;
}

/**
 * A client that goes away in the middle of a download: the stored file the answer was reading is closed
 * at once, not left open until the garbage collector finds its handle (one descriptor per aborted
 * download, which a busy service runs out of).
 */
describe('a download the client abandons', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let port: number;

  beforeAll(async () => {
    t = await startApp();
    tenant = await createTenant(t);
    const server = t.app.getHttpServer() as { address(): AddressInfo | null; listen(port: number): void };
    if (!server.address()) server.listen(0);
    port = server.address()!.port;
  });
  afterAll(() => t?.close());

  it('closes the stored file as soon as the connection is gone', async () => {
    // Large and incompressible, so the answer cannot leave in one write before the client hangs up.
    const { archive } = await buildSdf({ paddingBytes: 8 * 1024 * 1024 });
    const id = (await upload(t, tenant.apiKey, archive).expect(201)).body.id as string;
    const storedName = `${id}.sdf`;

    await new Promise<void>((resolve, reject) => {
      const req = request({
        port,
        host: '127.0.0.1',
        path: `/download/${id}`,
        headers: { 'X-API-Key': tenant.apiKey },
      });
      req.on('response', (res) => {
        expect(res.statusCode).toBe(200);
        res.once('data', () => {
          // The service is reading the file now; the client reads no further and hangs up.
          expect(openFilesWith(storedName)).not.toEqual([]);
          res.pause();
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(err)));
      req.end();
    });
    await waitUntil(() => openFilesWith(storedName).length === 0, 'the stored file closed', 5_000);
  });
});
