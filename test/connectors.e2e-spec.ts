import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import {
  COMBINATIONS,
  configureBody,
  erpInvoices,
  invoiceCreates,
  invoiceData,
  isInvoiceCreate,
  ORDER_REF,
  secretsFor,
  startStandIn,
  validInvoice,
  waitForPush,
} from './helpers/connectors.js';
import { upload, waitForFinal } from './helpers/documents.js';
import { OracleStandIn } from './helpers/oracle-standin.js';
import { SapStandIn } from './helpers/sap-standin.js';
import type { Credentials, ErpStandIn } from './helpers/erp-standin.js';
import { buildInvalidSdf, buildSdf } from './helpers/sdf-fixtures.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/** ERP calls shrunk for tests: a 500 ms time-out, retries 50 ms apart (production: 30 s, 1 s). */
const ERP_ENV = {
  ERP_TIMEOUT_MS: '500',
  ERP_RETRY_ATTEMPTS: '4',
  ERP_RETRY_BASE_DELAY_MS: '50',
  ERP_PUSH_ATTEMPTS: '3',
  ERP_PUSH_RETRY_BASE_DELAY_MS: '100',
  ERP_HEALTH_INTERVAL_MS: '3600000',
};

function secretValues(creds: Credentials): string[] {
  const { auth_type: _t, ...rest } = creds;
  return Object.values(rest);
}

describe.each(COMBINATIONS)('connectors: %s with %s credentials', (erp, auth) => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let standIn: ErpStandIn;
  let creds: Credentials;
  let connectorId: string;

  beforeAll(async () => {
    t = await startApp({ env: ERP_ENV });
    a = await createTenant(t, { rate_limit_rpm: 100_000 });
    b = await createTenant(t, { rate_limit_rpm: 100_000 });
    creds = secretsFor(auth);
    standIn = await startStandIn(erp, creds);
  });
  afterAll(async () => {
    await standIn.stop();
    await t.close();
  });

  const key = () => ({ 'X-API-Key': a.apiKey });

  it('configure: no response, row or audit entry holds a credential in clear; PATCH of one field keeps the others', async () => {
    const res = await t
      .http()
      .post('/connectors/configure')
      .set(key())
      .send(configureBody(erp, standIn, creds))
      .expect(201);
    connectorId = res.body.id as string;
    expect(res.body.credentials_set).toEqual(
      auth === 'basic'
        ? ['password', 'username']
        : auth === 'bearer'
          ? ['token']
          : ['client_id', 'client_secret', 'scope', 'token_url'],
    );
    expect(res.body.health_status).toBe('unknown');
    const list = await t.http().get('/connectors').set(key()).expect(200);
    expect(list.body.connectors.map((c: { id: string }) => c.id)).toEqual([connectorId]);

    const rows = await t.ds.query(`SELECT * FROM connectors WHERE id = $1`, [connectorId]);
    const audit = await t.ds.query(`SELECT * FROM audit_log WHERE resource_id = $1`, [connectorId]);
    expect(audit.map((r: { action: string }) => r.action)).toEqual(['connector.configure']);
    for (const secret of secretValues(creds)) {
      expect(JSON.stringify(res.body)).not.toContain(secret);
      expect(JSON.stringify(list.body)).not.toContain(secret);
      expect(JSON.stringify(rows)).not.toContain(secret);
      expect(JSON.stringify(audit)).not.toContain(secret);
    }

    // One field changes; the stand-in still accepts the others, so the connector keeps working.
    const field = auth === 'basic' ? 'username' : auth === 'bearer' ? 'token' : 'scope';
    const value = auth === 'oauth2' ? 'erp.read erp.write' : `${field}-changed`;
    const before = rows[0].credentials_enc as string;
    const patched = await t
      .http()
      .patch(`/connectors/${connectorId}`)
      .set(key())
      .send({ credentials: { [field]: value } })
      .expect(200);
    expect(patched.body.credentials_set).toEqual(res.body.credentials_set);
    const after = (await t.ds.query(`SELECT credentials_enc FROM connectors WHERE id = $1`, [connectorId]))[0];
    expect(after.credentials_enc).not.toBe(before);
    if (auth === 'basic') (creds as { username: string }).username = value;
    if (auth === 'bearer') (creds as { token: string }).token = value;
    // The changed field and the kept ones together authenticate: the stand-in answers healthy.
    const health = await t.http().get('/connectors/health').set(key()).expect(200);
    expect(health.body.connectors).toMatchObject([{ id: connectorId, health_status: 'healthy', reason: null }]);
    if (auth === 'oauth2') expect(new URLSearchParams(standIn.tokenRequests.at(-1)!.body).get('scope')).toBe(value);
  });

  it('health: healthy; cached for the minute; the stand-in stopped -> unhealthy with a reason', async () => {
    const first = await t.http().get('/connectors/health').set(key()).expect(200);
    expect(first.body.connectors[0].health_status).toBe('healthy');
    const checks = standIn.requests.length;
    await standIn.stop();
    const cached = await t.http().get('/connectors/health').set(key()).expect(200);
    expect(cached.body.connectors[0]).toEqual(first.body.connectors[0]);
    expect(standIn.requests.length).toBe(checks);
    // The minute has passed (the stored check is made older, as time would).
    await t.ds.query(`UPDATE connectors SET last_health_check = now() - interval '61 seconds' WHERE id = $1`, [
      connectorId,
    ]);
    const down = await t.http().get('/connectors/health').set(key()).expect(200);
    expect(down.body.connectors[0].health_status).toBe('unhealthy');
    expect(down.body.connectors[0].reason).toMatch(/ECONNREFUSED/);
    const row = (
      await t.ds.query(`SELECT health_status, health_reason FROM connectors WHERE id = $1`, [connectorId])
    )[0];
    expect(row.health_status).toBe('unhealthy');
    await standIn.start();
    await t.ds.query(`UPDATE connectors SET last_health_check = NULL WHERE id = $1`, [connectorId]);
    const up = await t.http().get('/connectors/health').set(key()).expect(200);
    expect(up.body.connectors[0].health_status).toBe('healthy');
  });

  it('match: an agreeing purchase order -> matched, no differences; a changed quantity and price -> exactly those', async () => {
    const id = await validInvoice(t, a.apiKey);
    const res = await t
      .http()
      .post('/connectors/match')
      .set(key())
      .send({ document_id: id, connector_id: connectorId })
      .expect(200);
    expect(res.body).toMatchObject({ matched: true, connector_id: connectorId, differences: [] });
    expect(res.body.erp_document.id).toBe(ORDER_REF);

    const data = invoiceData();
    const lines = data.line_items as Record<string, unknown>[];
    lines[0].quantity = 40;
    lines[1].unit_price = { amount: '5.10', currency: 'EUR' };
    const changed = await validInvoice(t, a.apiKey, data);
    const diff = await t.http().post('/connectors/match').set(key()).send({ document_id: changed }).expect(200);
    expect(diff.body.matched).toBe(false);
    expect(diff.body.differences).toEqual([
      { field: 'line_items[0].quantity', sdf: '40', erp: erp === 'SAP' ? '50.000' : '50' },
      { field: 'line_items[1].unit_price', sdf: '5.10', erp: erp === 'SAP' ? '4.80' : '4.8' },
    ]);
    const audit = await t.ds.query(`SELECT action, metadata FROM audit_log WHERE resource_id = $1`, [changed]);
    expect(audit.filter((r: { action: string }) => r.action === 'connector.match')).toHaveLength(1);
  });

  it("match: an order_ref holding ' and ' or ' matches nothing and reaches the ERP escaped", async () => {
    const hostile = `${ORDER_REF}' or '1'='1`;
    const id = await validInvoice(t, a.apiKey, invoiceData({ order_ref: hostile }));
    const res = await t.http().post('/connectors/match').set(key()).send({ document_id: id }).expect(200);
    expect(res.body).toMatchObject({ matched: false, erp_document: null, differences: [] });
    const last = standIn.requests
      .filter((r) => r.method === 'GET' && /purchaseOrders|A_PurchaseOrder$/.test(r.path))
      .at(-1)!;
    if (erp === 'SAP') expect(last.query.get('$filter')).toBe(`PurchaseOrder eq '${ORDER_REF}'' or ''1''=''1'`);
    else expect(last.query.get('q')).toBe(`OrderNumber='${ORDER_REF}'' or ''1''=''1'`);
  });

  it('push: one ERP document with the mapped fields in the ERP formats; pushing again returns the same push', async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    const [doc] = erpInvoices(standIn, data.invoice_number as string);
    expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
    if (erp === 'SAP') {
      expect(push.erp_document_id).toBe(doc.SupplierInvoice);
      expect(doc).toMatchObject({
        InvoicingParty: '17300001',
        DocumentDate: `/Date(${Date.UTC(2026, 2, 15)})/`,
        DocumentCurrency: 'EUR',
        InvoiceGrossAmount: '1713.60',
        to_SuplrInvcItemPurOrdRef: {
          results: [
            {
              PurchaseOrder: ORDER_REF,
              PurchaseOrderItem: '10',
              SupplierInvoiceItemAmount: '1200.00',
              QuantityInPurchaseOrderUnit: '50',
            },
            {
              PurchaseOrder: ORDER_REF,
              PurchaseOrderItem: '20',
              SupplierInvoiceItemAmount: '240.00',
              QuantityInPurchaseOrderUnit: '50',
            },
          ],
        },
      });
      // C2: the write carried a CSRF token fetched just before, with its session cookie.
      const post = standIn.requests.filter(isInvoiceCreate).at(-1)!;
      expect(post.headers['x-csrf-token']).toBeTruthy();
      expect(post.headers.cookie).toMatch(/SAP_SESSIONID_STD_100=/);
    } else {
      expect(push.erp_document_id).toBe(String(doc.InvoiceId));
      expect(doc).toMatchObject({
        InvoiceDate: '2026-03-15',
        InvoiceCurrency: 'EUR',
        InvoiceAmount: '1713.60',
        Supplier: 'Acme Supplies GmbH',
        PurchaseOrderNumber: ORDER_REF,
        invoiceLines: [
          { LineNumber: 1, LineAmount: '1200.00', Quantity: '50', UnitPrice: '24.00' },
          { LineNumber: 2, LineAmount: '240.00', Quantity: '50', UnitPrice: '4.80' },
        ],
      });
    }
    const again = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    expect(again.body.push_id).toBe(res.body.push_id);
    const alias = await t
      .http()
      .post(`/sdf/${id}/push-to-erp`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    expect(alias.body.push_id).toBe(res.body.push_id);
    const status = await t.http().get(`/sdf/${id}/erp-status`).set(key()).expect(200);
    expect(status.body.pushes).toMatchObject([{ push_id: res.body.push_id, status: 'succeeded' }]);
    expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
    const audit = await t.ds.query(`SELECT action FROM audit_log WHERE resource_id = $1 ORDER BY created_at`, [id]);
    expect(audit.map((r: { action: string }) => r.action).filter((x: string) => x.startsWith('connector.'))).toEqual([
      'connector.push',
      'connector.push_succeeded',
    ]);
  });

  it('push: 503 twice then 201 -> exactly one ERP document', async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    const creates = invoiceCreates(standIn);
    standIn.inject(isInvoiceCreate, { status: 503 }, { status: 503 });
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    expect(invoiceCreates(standIn) - creates).toBe(3);
    expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
  });

  it('push: 429 with Retry-After: 2 -> the retry waits at least 2 s', async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    standIn.inject(isInvoiceCreate, { status: 429, headers: { 'Retry-After': '2' } });
    const from = standIn.requests.length;
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    const seen = standIn.requests.slice(from);
    const refused = seen.findIndex(isInvoiceCreate);
    // Measured on the stand-in's side: from the 429 to the next request of the retried attempt.
    expect(seen[refused + 1].at - seen[refused].at).toBeGreaterThanOrEqual(2000);
    expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
  });

  it('push: a stand-in that never answers -> the attempt is cut at the time-out and retried', async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    const creates = invoiceCreates(standIn);
    standIn.inject(isInvoiceCreate, { hang: true });
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    expect(invoiceCreates(standIn) - creates).toBe(2);
    expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
  });

  it('push: the ERP accepted but the answer was lost -> the retry finds the document instead of creating another', async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    const creates = invoiceCreates(standIn);
    standIn.inject(isInvoiceCreate, { acceptThenHang: true });
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    expect(invoiceCreates(standIn) - creates).toBe(1);
    const docs = erpInvoices(standIn, data.invoice_number as string);
    expect(docs).toHaveLength(1);
    expect(push.erp_document_id).toBe(String(docs[0].SupplierInvoice ?? docs[0].InvoiceId));
  });

  it("push: the ERP's own message on a refusal; the job lands in the failed set", async () => {
    const data = invoiceData();
    const id = await validInvoice(t, a.apiKey, data);
    standIn.inject(isInvoiceCreate, {
      status: 400,
      body:
        erp === 'SAP'
          ? { error: { code: 'M8/123', message: { lang: 'en', value: 'Posting period 2026/03 is closed' } } }
          : {
              title: 'Bad Request',
              status: '400',
              'o:errorDetails': [{ detail: 'Posting period 2026/03 is closed', 'o:errorCode': 'AP-1' }],
            },
    });
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push).toMatchObject({ status: 'failed', erp_document_id: null });
    expect(push.error).toContain('Posting period 2026/03 is closed');
    const failed = await t
      .http()
      .get('/admin/queues/erp-push/failed')
      .set('Authorization', `Bearer ${t.adminToken()}`)
      .expect(200);
    expect(failed.body.jobs.map((j: { job_id: string }) => j.job_id)).toContain(`erp-push:${res.body.push_id}`);
  });

  if (auth === 'oauth2') {
    it('OAuth2: N pushes within a token lifetime make one token request; an expired token is renewed once', async () => {
      // A connector of its own, so no token is cached for it yet.
      const own = await t
        .http()
        .post('/connectors/configure')
        .set(key())
        .send(configureBody(erp, standIn, creds))
        .expect(201);
      const tokensBefore = standIn.tokenRequests.length;
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await validInvoice(t, a.apiKey));
      const pushes = await Promise.all(
        ids.map((id) =>
          t.http().post(`/connectors/push-to-erp/${id}`).set(key()).send({ connector_id: own.body.id }).expect(202),
        ),
      );
      for (const p of pushes)
        expect((await waitForPush(t, a.apiKey, p.body.push_id as string)).status).toBe('succeeded');
      expect(standIn.tokenRequests.length - tokensBefore).toBe(1);

      standIn.expireTokens();
      const next = await validInvoice(t, a.apiKey);
      const p = await t
        .http()
        .post(`/connectors/push-to-erp/${next}`)
        .set(key())
        .send({ connector_id: own.body.id })
        .expect(202);
      expect((await waitForPush(t, a.apiKey, p.body.push_id as string)).status).toBe('succeeded');
      expect(standIn.tokenRequests.length - tokensBefore).toBe(2);
    });
  }

  if (erp === 'SAP') {
    it('SAP: a 403 asking for a CSRF token fetches a fresh one once and writes again', async () => {
      const data = invoiceData();
      const id = await validInvoice(t, a.apiKey, data);
      const fetches = standIn.requests.filter((r) => r.headers['x-csrf-token'] === 'Fetch').length;
      // The token fetched for the write is invalid by the time the write arrives (a session ended).
      standIn.inject((r) => r.headers['x-csrf-token'] === 'Fetch', {
        status: 200,
        headers: { 'x-csrf-token': 'stale' },
        body: { d: {} },
      });
      const res = await t
        .http()
        .post(`/connectors/push-to-erp/${id}`)
        .set(key())
        .send({ connector_id: connectorId })
        .expect(202);
      expect((await waitForPush(t, a.apiKey, res.body.push_id as string)).status).toBe('succeeded');
      expect(standIn.requests.filter((r) => r.headers['x-csrf-token'] === 'Fetch').length - fetches).toBe(2);
      expect(erpInvoices(standIn, data.invoice_number as string)).toHaveLength(1);
      standIn.clearFaults();
    });
  }

  it('nomination: matched against its delivery by nomination_ref and pushed as a delivery or receipt request', async () => {
    const ref = `DLV-${Date.now()}`;
    if (erp === 'SAP') {
      (standIn as SapStandIn).deliveries.push({
        DeliveryDocument: ref,
        Supplier: '17300001',
        DeliveryDate: `/Date(${Date.UTC(2026, 3, 2)})/`,
        to_DeliveryDocumentItem: { results: [{ ActualDeliveryQuantity: '1200.000' }] },
      });
    } else {
      (standIn as OracleStandIn).receipts.push({
        HeaderInterfaceId: 42,
        ShipmentNumber: ref,
        VendorName: 'Acme Supplies GmbH',
        ExpectedReceiptDate: '2026-04-02',
        lines: [{ Quantity: 1200 }],
      });
    }
    const data = {
      document_type: 'nomination',
      nomination_number: `NOM-${Date.now()}`,
      nomination_ref: ref,
      issuer: { name: 'Acme Supplies GmbH', id: '17300001' },
      delivery_date: '2026-04-02',
      quantity: { value: '1200', unit: 'KG' },
      product: 'MAT-7',
    };
    const { archive } = await buildSdf({ documentType: 'nomination', data, schema: { type: 'object' } });
    const up = await upload(t, a.apiKey, archive).expect(201);
    expect((await waitForFinal(t, a.apiKey, up.body.id as string)).body.status).toBe('valid');
    const match = await t.http().post('/connectors/match').set(key()).send({ document_id: up.body.id }).expect(200);
    expect(match.body).toMatchObject({ matched: true, differences: [], erp_document: { type: 'delivery' } });
    const res = await t
      .http()
      .post(`/connectors/push-to-erp/${up.body.id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    const push = await waitForPush(t, a.apiKey, res.body.push_id as string);
    expect(push.status).toBe('succeeded');
    if (erp === 'SAP') {
      const created = (standIn as SapStandIn).deliveries.filter(
        (d) => d.DeliveryDocumentBySupplier === data.nomination_number,
      );
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({
        PlannedGoodsIssueDate: `/Date(${Date.UTC(2026, 3, 2)})/`,
        to_DeliveryDocumentItem: {
          results: [{ ActualDeliveryQuantity: '1200', DeliveryQuantityUnit: 'KG', Material: 'MAT-7' }],
        },
      });
    } else {
      const created = (standIn as OracleStandIn).receipts.filter((d) => d.ShipmentNumber === data.nomination_number);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({
        ExpectedReceiptDate: '2026-04-02',
        lines: [{ Quantity: '1200', UnitOfMeasure: 'KG' }],
      });
    }
  });

  it('pending or invalid documents are 409 for match and push', async () => {
    const bad = await upload(t, a.apiKey, buildInvalidSdf()).expect(201);
    const final = await waitForFinal(t, a.apiKey, bad.body.id as string);
    expect(final.body.status).toBe('invalid');
    await t.http().post('/connectors/match').set(key()).send({ document_id: bad.body.id }).expect(409);
    const push = await t
      .http()
      .post(`/connectors/push-to-erp/${bad.body.id}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(409);
    expect(push.body.error.code).toBe('INVALID_STATE');
  });

  it("another tenant's connector or document is 404, and cannot be named in connector_id", async () => {
    const ownDoc = await validInvoice(t, a.apiKey);
    const other = { 'X-API-Key': b.apiKey };
    const bConnector = await t
      .http()
      .post('/connectors/configure')
      .set(other)
      .send(configureBody(erp, standIn, creds))
      .expect(201);
    // B names A's connector; A names B's connector; B names A's document.
    await t
      .http()
      .post('/connectors/match')
      .set(other)
      .send({ document_id: ownDoc, connector_id: connectorId })
      .expect(404);
    await t
      .http()
      .post(`/connectors/push-to-erp/${ownDoc}`)
      .set(key())
      .send({ connector_id: bConnector.body.id })
      .expect(404);
    await t
      .http()
      .post(`/connectors/push-to-erp/${ownDoc}`)
      .set(other)
      .send({ connector_id: bConnector.body.id })
      .expect(404);
    await t.http().post('/connectors/match').set(other).send({ document_id: ownDoc }).expect(404);
    await t.http().patch(`/connectors/${connectorId}`).set(other).send({ name: 'x' }).expect(404);
    await t.http().delete(`/connectors/${connectorId}`).set(other).expect(404);
    const pushed = await t
      .http()
      .post(`/connectors/push-to-erp/${ownDoc}`)
      .set(key())
      .send({ connector_id: connectorId })
      .expect(202);
    await t.http().get(`/connectors/pushes/${pushed.body.push_id}`).set(other).expect(404);
    await t.http().get(`/sdf/${ownDoc}/erp-status`).set(other).expect(404);
    await waitForPush(t, a.apiKey, pushed.body.push_id as string);
  });

  it('roles: a member user may not configure, change or delete; an admin user, an API key and a role-less token may', async () => {
    const token = (role?: string) =>
      jwt.sign(role ? { tenant_id: a.id, role } : { tenant_id: a.id }, t.config.secrets.jwtSecret, {
        algorithm: 'HS256',
        subject: 'user-7',
        expiresIn: 600,
      });
    const as = (role?: string) => ({ Authorization: `Bearer ${token(role)}` });
    const body = configureBody(erp, standIn, creds);
    const member = await t.http().post('/connectors/configure').set(as('member')).send(body).expect(403);
    expect(member.body.error.code).toBe('FORBIDDEN');
    await t.http().patch(`/connectors/${connectorId}`).set(as('member')).send({ name: 'x' }).expect(403);
    await t.http().delete(`/connectors/${connectorId}`).set(as('member')).expect(403);
    await t.http().get('/connectors').set(as('member')).expect(200);
    const byAdmin = await t.http().post('/connectors/configure').set(as('admin')).send(body).expect(201);
    const byToken = await t.http().post('/connectors/configure').set(as()).send(body).expect(201);
    await t.http().delete(`/connectors/${byAdmin.body.id}`).set(as('owner')).expect(204);
    await t.http().delete(`/connectors/${byToken.body.id}`).set(key()).expect(204);
    const audit = await t.ds.query(`SELECT action, actor FROM audit_log WHERE resource_id = $1 ORDER BY created_at`, [
      byAdmin.body.id,
    ]);
    expect(audit).toEqual([
      { action: 'connector.configure', actor: 'user:user-7' },
      { action: 'connector.delete', actor: 'user:user-7' },
    ]);
  });

  it('bad credentials for the auth_type are 400 with the field named', async () => {
    const body = configureBody(erp, standIn, creds);
    const res = await t
      .http()
      .post('/connectors/configure')
      .set(key())
      .send({ ...body, credentials: { nothing: 'here' } })
      .expect(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('/credentials');
    await t
      .http()
      .post('/connectors/configure')
      .set(key())
      .send({ ...body, base_url: 'ftp://erp.example.com' })
      .expect(400);
  });
});
