import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  COMBINATIONS,
  configureBody,
  erpInvoices,
  invoiceCreates,
  invoiceData,
  isInvoiceCreate,
  secretsFor,
  startStandIn,
  validInvoice,
  waitForPush,
} from './helpers/connectors.js';
import { upload } from './helpers/documents.js';
import type { ErpStandIn } from './helpers/erp-standin.js';
import { distMain, requireBuild, startNode } from './helpers/processes.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { waitUntil } from './helpers/wait.js';

/** A dead worker's job is taken up again after about a second (production: 30 s). */
const WORKER_ENV = {
  PROCESS_ROLE: 'worker',
  WORKER_LOCK_DURATION_MS: '1000',
  WORKER_STALLED_INTERVAL_MS: '500',
  ERP_TIMEOUT_MS: '500',
  ERP_RETRY_BASE_DELAY_MS: '50',
  ERP_HEALTH_INTERVAL_MS: '3600000',
};

/** A worker of the built program, sharing the API's database, Redis prefix, storage and secrets. */
async function spawnWorker(api: TestApp, env: Record<string, string>): Promise<ChildProcess> {
  requireBuild(distMain);
  const c = api.config;
  const { child } = await startNode(
    [distMain],
    {
      PATH: process.env.PATH,
      DATABASE_URL: c.env.DATABASE_URL,
      DATABASE_AUTO_CREATE: 'false',
      DATABASE_RUN_MIGRATIONS: 'false',
      DATABASE_POOL_SIZE: '3',
      REDIS_URL: c.env.REDIS_URL,
      REDIS_PREFIX: c.env.REDIS_PREFIX,
      JWT_SECRET: c.secrets.jwtSecret,
      ADMIN_JWT_SECRET: c.secrets.adminJwtSecret,
      MASTER_KEY: c.env.MASTER_KEY!,
      STORAGE_LOCAL_DIR: c.env.STORAGE_LOCAL_DIR,
      VALIDATION_POOL_WORKERS: '1',
      LOG_LEVEL: 'info',
      ...WORKER_ENV,
      ...env,
    },
    (line) => line.includes('"msg":"worker started"'),
  );
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe.each(COMBINATIONS)('connector pushes survive workers: %s with %s credentials', (erp, auth) => {
  let api: TestApp;
  let tenant: TenantFixture;
  let standIn: ErpStandIn;
  let connectorId: string;
  const children: ChildProcess[] = [];
  const apps: TestApp[] = [];

  beforeAll(async () => {
    api = await startApp({ env: { PROCESS_ROLE: 'api' } });
    tenant = await createTenant(api, { rate_limit_rpm: 100_000 });
    const creds = secretsFor(auth);
    standIn = await startStandIn(erp, creds);
    const res = await api
      .http()
      .post('/connectors/configure')
      .set('X-API-Key', tenant.apiKey)
      .send(configureBody(erp, standIn, creds))
      .expect(201);
    connectorId = res.body.id as string;
  });
  afterAll(async () => {
    for (const c of children) await kill(c);
    for (const a of apps) await a.close().catch(() => undefined);
    await standIn.stop();
    await api.close();
  });

  it('a pending document cannot be matched or pushed (409)', async () => {
    // No worker runs yet, so the upload stays pending.
    const { archive } = await buildSdf({ data: invoiceData(), schema: { type: 'object' } });
    const res = await upload(api, tenant.apiKey, archive).expect(201);
    expect(res.body.status).toBe('pending');
    const key = { 'X-API-Key': tenant.apiKey };
    const match = await api.http().post('/connectors/match').set(key).send({ document_id: res.body.id }).expect(409);
    expect(match.body.error.code).toBe('INVALID_STATE');
    await api
      .http()
      .post(`/connectors/push-to-erp/${res.body.id}`)
      .set(key)
      .send({ connector_id: connectorId })
      .expect(409);
  });

  it('a worker killed after the ERP accepted, before the push was recorded: the retried job finds the document and records it', async () => {
    // The first worker would wait a minute for the answer: it dies long before.
    const w1 = await spawnWorker(api, { ERP_TIMEOUT_MS: '60000' });
    children.push(w1);
    const data = invoiceData();
    const id = await validInvoice(api, tenant.apiKey, data);
    standIn.inject(isInvoiceCreate, { acceptThenHang: true });
    const res = await api
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set('X-API-Key', tenant.apiKey)
      .send({ connector_id: connectorId })
      .expect(202);
    const pushId = res.body.push_id as string;
    await waitUntil(() => erpInvoices(standIn, data.invoice_number as string).length === 1, 'the ERP to accept');
    await kill(w1);
    const row = (await api.ds.query(`SELECT status, erp_document_id FROM erp_pushes WHERE id = $1`, [pushId]))[0];
    expect(row).toEqual({ status: 'running', erp_document_id: null });

    const w2 = await startApp({ shareWith: api, env: WORKER_ENV });
    apps.push(w2);
    const push = await waitForPush(api, tenant.apiKey, pushId);
    expect(push.status).toBe('succeeded');
    const docs = erpInvoices(standIn, data.invoice_number as string);
    expect(docs).toHaveLength(1);
    expect(invoiceCreates(standIn)).toBe(1);
    expect(push.erp_document_id).toBe(String(docs[0].SupplierInvoice ?? docs[0].InvoiceId));
    const audit = await api.ds.query(
      `SELECT metadata FROM audit_log WHERE action = 'connector.push_succeeded' AND resource_id = $1`,
      [id],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0].metadata.found_existing).toBe(true);
  });
});

describe('the worker checks connector health on a schedule', () => {
  it('a connector nobody asked about becomes healthy, then unhealthy once its ERP stops', async () => {
    const api = await startApp({ env: { PROCESS_ROLE: 'api' } });
    const tenant = await createTenant(api, { rate_limit_rpm: 100_000 });
    const creds = secretsFor('basic');
    const standIn = await startStandIn('SAP', creds);
    let worker: TestApp | undefined;
    try {
      const res = await api
        .http()
        .post('/connectors/configure')
        .set('X-API-Key', tenant.apiKey)
        .send(configureBody('SAP', standIn, creds))
        .expect(201);
      const status = async () =>
        (await api.ds.query(`SELECT health_status, health_reason FROM connectors WHERE id = $1`, [res.body.id]))[0] as {
          health_status: string;
          health_reason: string | null;
        };
      worker = await startApp({
        shareWith: api,
        env: { ...WORKER_ENV, ERP_HEALTH_INTERVAL_MS: '100', ERP_HEALTH_CACHE_SECONDS: '1' },
      });
      await waitUntil(async () => (await status()).health_status === 'healthy', 'a scheduled healthy check');
      await standIn.stop();
      await waitUntil(async () => (await status()).health_status === 'unhealthy', 'a scheduled unhealthy check');
      expect((await status()).health_reason).toMatch(/ECONNREFUSED/);
    } finally {
      await worker?.close();
      await standIn.stop();
      await api.close();
    }
  });
});
