import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf, invoiceData, invoiceMeta } from '../src/sdf/testing/build-sdf.js';
import { requestContext } from '../src/common/request-context.js';
import { startApp, type TestApp } from './helpers/app.js';
import { bearer, login, registerVerified, type Account, type Tokens } from './helpers/accounts.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';

interface Entry {
  id: string;
  action: string;
  action_label: string;
  actor: string;
  actor_display: { kind: string; name: string; email: string | null; key_prefix: string | null };
  document: { id: string; title: string | null; deleted: boolean } | null;
  resource_id: string | null;
}

interface Organization {
  account: Account;
  tokens: Tokens;
  key: { key: string; key_prefix: string };
}

/** An invoice whose business number is `number` (its title is "Invoice <number>"). */
function invoice(number: string): Buffer {
  return buildSdf({
    data: { ...invoiceData(), invoice_number: number },
    meta: { ...invoiceMeta(), document_id: randomUUID() },
  });
}

describe('GET /v1/audit names what it records: document titles, people, keys, the service, in bulk and per organization', () => {
  let t: TestApp;
  let smtp: SmtpSink;
  let a: Organization;
  let b: Organization;
  let kept: string;
  let deleted: string;
  let otherDocument: string;

  const page = (query: Record<string, string | number> = {}) =>
    t
      .http()
      .get('/v1/audit')
      .query({ limit: 200, ...query })
      .set(bearer(a.tokens))
      .expect(200);

  async function organization(person: string, keyName: string): Promise<Organization> {
    const account = await registerVerified(t, smtp);
    const tokens = await login(t, account.email);
    await t.http().patch('/v1/account/profile').set(bearer(tokens)).send({ name: person }).expect(200);
    const key = (await t.http().post('/v1/api-keys').set(bearer(tokens)).send({ name: keyName }).expect(201))
      .body as Organization['key'];
    return { account, tokens, key };
  }

  async function stored(org: Organization, number: string): Promise<string> {
    const id = (await upload(t, org.key.key, invoice(number)).expect(201)).body.id as string;
    expect((await waitForFinal(t, org.key.key, id)).body.status).toBe('valid');
    return id;
  }

  beforeAll(async () => {
    smtp = await startSmtpSink();
    t = await startApp({
      env: { DEPLOYMENT_MODE: 'managed', SMTP_URL: smtp.url, AUTH_FAILURE_LIMIT: '100000' },
    });
    a = await organization('Ada Lovelace', 'Invoice robot');
    b = await organization('Bea Otherorg', 'Other robot');
    kept = await stored(a, 'INV-2026-00142');
    deleted = await stored(a, 'INV-2026-00999');
    otherDocument = await stored(b, 'INV-OTHER-777');
    await t.http().get(`/download/${kept}`).set('X-API-Key', a.key.key).expect(200);
    await t.http().delete(`/delete/${deleted}`).set('X-API-Key', a.key.key).expect(204);
    // The operator's own act on the organization, and one of the service's jobs.
    await t
      .http()
      .post(`/admin/tenants/${a.account.tenantId}/keys`)
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .send({ name: 'Made by the operator' })
      .expect(201);
    await t.ds.query(
      `INSERT INTO audit_log (tenant_id, action, actor, resource_id, metadata)
       VALUES ($1, 'webhook.delivery_failed', 'system:webhook-delivery', $2, '{}')`,
      [a.account.tenantId, randomUUID()],
    );
    // Entries of A that name B's person, B's key prefix and B's document (as a forged or mistaken entry
    // would): the names are read from A's organization alone, so none of B's may show.
    await t.ds.query(
      `INSERT INTO audit_log (tenant_id, action, actor, resource_id, metadata)
       VALUES ($1, 'download', $2, $4, '{}'), ($1, 'download', $3, $4, '{}'), ($1, 'login', $2, NULL, '{}')`,
      [a.account.tenantId, `user:${b.account.userId}`, `api_key:${b.key.key_prefix}`, otherDocument],
    );
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('a document entry carries its title; a deleted one says so, and its deletion keeps the title it had', async () => {
    const entries = (await page()).body.entries as Entry[];
    const of = (action: string, id: string) => entries.find((e) => e.action === action && e.resource_id === id)!;
    expect(of('upload', kept).document).toEqual({ id: kept, title: 'Invoice INV-2026-00142', deleted: false });
    expect(of('upload', kept).action_label).toBe('Document uploaded');
    expect(of('download', kept).document).toEqual({ id: kept, title: 'Invoice INV-2026-00142', deleted: false });
    expect(of('download', kept).action_label).toBe('Document downloaded');
    expect(of('upload', deleted).document).toEqual({ id: deleted, title: null, deleted: true });
    expect(of('delete', deleted).document).toEqual({ id: deleted, title: 'Invoice INV-2026-00999', deleted: true });
    expect(of('delete', deleted).action_label).toBe('Document deleted');
    // Entries about something else than a document have none.
    const login = entries.find((e) => e.action === 'login' && e.actor === `user:${a.account.userId}`)!;
    expect(login.document).toBeNull();
    expect(login.action_label).toBe('Signed in');
  });

  it('the actor in words: a person by name and address, an API key by name and prefix, the operator and the service by a plain word', async () => {
    const entries = (await page()).body.entries as Entry[];
    const profile = entries.find((e) => e.action === 'profile.update')!;
    expect(profile.actor_display).toEqual({
      kind: 'user',
      name: 'Ada Lovelace',
      email: a.account.email.toLowerCase(),
      key_prefix: null,
    });
    const upload = entries.find((e) => e.action === 'upload' && e.resource_id === kept)!;
    expect(upload.actor).toBe(`api_key:${a.key.key_prefix}`);
    expect(upload.actor_display).toEqual({
      kind: 'api_key',
      name: 'Invoice robot',
      email: null,
      key_prefix: a.key.key_prefix,
    });
    const byOperator = entries.find((e) => e.action === 'api_key.create' && e.actor.startsWith('admin:'))!;
    expect(byOperator.action_label).toBe('API key created');
    expect(byOperator.actor_display).toEqual({
      kind: 'operator',
      name: 'Service operator',
      email: null,
      key_prefix: null,
    });
    const bySystem = entries.find((e) => e.action === 'webhook.delivery_failed')!;
    expect(bySystem.actor_display).toEqual({ kind: 'system', name: 'System', email: null, key_prefix: null });
    expect(bySystem.action_label).toBe('Webhook delivery failed');
  });

  it("another organization's person, key and document are never named, whatever an entry points at", async () => {
    const res = await page();
    const text = JSON.stringify(res.body);
    for (const secret of ['Bea Otherorg', b.account.email.toLowerCase(), 'Other robot', 'INV-OTHER-777']) {
      expect(text).not.toContain(secret);
    }
    const entries = res.body.entries as Entry[];
    const asB = entries.filter((e) => e.actor === `user:${b.account.userId}`);
    expect(asB).toHaveLength(2);
    for (const e of asB) {
      expect(e.actor_display).toEqual({ kind: 'user', name: 'Removed user', email: null, key_prefix: null });
    }
    const asBKey = entries.find((e) => e.actor === `api_key:${b.key.key_prefix}`)!;
    expect(asBKey.actor_display.name).toBe(a.key.key_prefix === b.key.key_prefix ? 'Invoice robot' : 'API key');
    for (const e of entries.filter((x) => x.resource_id === otherDocument)) {
      expect(e.document).toEqual({ id: otherDocument, title: null, deleted: true });
    }
    // B's own log does name them.
    const own = await t.http().get('/v1/audit').query({ limit: 200 }).set(bearer(b.tokens)).expect(200);
    expect(JSON.stringify(own.body)).toContain('INV-OTHER-777');
    expect(JSON.stringify(own.body)).toContain('Bea Otherorg');
  });

  it('resolves names with one statement per kind for a whole page', async () => {
    // The page's own statements: those made for its request id, not the background tasks' meanwhile.
    const requestId = `audit-names-${randomUUID()}`;
    const statements: string[] = [];
    const original = t.ds.query.bind(t.ds);
    t.ds.query = ((sql: string, params?: unknown[]) => {
      if (requestContext.get()?.requestId === requestId) statements.push(sql);
      return original(sql, params);
    }) as typeof t.ds.query;
    try {
      const response = await t
        .http()
        .get('/v1/audit')
        .query({ limit: 200 })
        .set({ ...bearer(a.tokens), 'X-Request-Id': requestId })
        .expect(200);
      expect(response.headers['x-request-id']).toBe(requestId);
      const entries = response.body.entries as Entry[];
      expect(entries.length).toBeGreaterThan(10);
    } finally {
      t.ds.query = original;
    }
    const count = (table: string) => statements.filter((s) => new RegExp(`FROM ${table}\\b`).test(s)).length;
    expect(count('users')).toBe(1);
    expect(count('api_keys')).toBe(1);
    expect(count('documents')).toBe(1);
    expect(count('audit_log')).toBe(1);
  });

  it('the action filter takes the names GET /v1/audit/actions lists with their words', async () => {
    const listed = (await t.http().get('/v1/audit/actions').set(bearer(a.tokens)).expect(200)).body as {
      actions: { action: string; label: string }[];
    };
    expect(listed.actions).toContainEqual({ action: 'upload', label: 'Document uploaded' });
    expect(listed.actions).toContainEqual({ action: 'sign', label: 'Document signed' });
    expect(listed.actions).toContainEqual({ action: 'api_key.create', label: 'API key created' });
    expect(listed.actions.map((x) => x.action)).not.toContain('admin.dashboard_login');
    const uploads = (await page({ action: 'upload' })).body.entries as Entry[];
    expect(uploads.map((e) => e.resource_id).sort()).toEqual([kept, deleted].sort());
    await t.http().get('/v1/audit/actions').expect(401);
  });
});
