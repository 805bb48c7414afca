import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A sign job that fails for good (here: the tenant's private key no longer decrypts, as under a wrong
 * master key) must not leave the document silently `valid`: the reason shows on GET /sdf/:id, an
 * error line is logged and the audit trail records it.
 */
describe('a signing job that fails for good', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await startApp({ logSink: (line) => lines.push(line) });
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  it('leaves signing_error on the document, logs an error line and writes an audit entry', async () => {
    const uploaded = await upload(t, tenant.apiKey, (await buildSdf()).archive).expect(201);
    const id = uploaded.body.id as string;
    expect((await waitForFinal(t, tenant.apiKey, id)).body.status).toBe('valid');
    // A sealed key that no longer authenticates: what a key sealed under another master key looks like.
    await t.ds.query(`UPDATE signing_keys SET private_key_enc = private_key_enc || 'x' WHERE tenant_id = $1`, [
      tenant.id,
    ]);

    await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
    // Polled in the database (the API's rate limit would count the polls), then read once as a client does.
    await waitUntil(
      async () =>
        (
          (await t.ds.query(`SELECT signing_error FROM documents WHERE id = $1`, [id])) as { signing_error: unknown }[]
        )[0]?.signing_error,
      'signing_error',
      30_000,
    );
    const failed = await t.http().get(`/sdf/${id}`).set('X-API-Key', tenant.apiKey).expect(200);
    expect(failed.body.status).toBe('valid');
    expect(failed.body.is_signed).toBe(false);
    expect(failed.body.signing_error).toMatchObject({ code: 'SIGNING_FAILED', attempts: 3 });

    const errorLines = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 'error' && l.msg === 'signing failed for good');
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toMatchObject({ tenant_id: tenant.id, id });

    const audit: { action: string; actor: string; metadata: { attempts: number } }[] = await t.ds.query(
      `SELECT action, actor, metadata FROM audit_log WHERE tenant_id = $1 AND resource_id = $2 AND action = 'sign.failed'`,
      [tenant.id, id],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'system:sign-sdf', metadata: { attempts: 3 } });
  });
});
