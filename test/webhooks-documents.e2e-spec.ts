import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES, SPEC_EVENT_NAMES } from '../src/events/events.js';
import { pack } from '../src/sdf/index.js';
import { startApp, type TestApp } from './helpers/app.js';
import { registerWebhook } from './helpers/events.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver.js';

const SECRET = 'whsec-documents-flow-secret';

const INVOICE_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['document_type', 'invoice_number', 'totals'],
  properties: {
    document_type: { type: 'string' },
    invoice_number: { type: 'string' },
    totals: {
      type: 'object',
      required: ['gross'],
      properties: {
        gross: {
          type: 'object',
          required: ['amount', 'currency'],
          properties: { amount: { type: 'string' }, currency: { type: 'string' } },
        },
      },
    },
  },
};

/**
 * The first acceptance point end to end: the document endpoints emit the events and the receiver
 * gets them, signed.
 */
describe('webhooks on the document lifecycle (SDF-SPEC Events, S10)', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startApp({ env: { WEBHOOK_DISPATCH_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_DELAY_MS: '100' } });
    tenant = await createTenant(t);
    receiver = await WebhookReceiver.start(() => 200);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('delivers uploaded, validated, signed and deleted, each verifiable over the raw bytes', async () => {
    await registerWebhook(t, tenant.apiKey, { url: receiver.url(), secret: SECRET, events: [...EVENT_NAMES] });
    const { archive, meta } = await pack({
      data: {
        document_type: 'invoice',
        invoice_number: 'INV-1',
        totals: { gross: { amount: '10.00', currency: 'EUR' } },
      },
      schema: INVOICE_SCHEMA,
      meta: { document_type: 'invoice', issuer: 'Acme GmbH', schema_id: 'invoice/v1' },
    });

    const uploaded = await t
      .http()
      .post('/upload')
      .set('X-API-Key', tenant.apiKey)
      .attach('file', archive, { filename: 'invoice.sdf', contentType: 'application/octet-stream' })
      .expect(201);
    const record = uploaded.body as { id: string; document_id: string };
    expect(record.document_id).toBe(meta.document_id);

    const first = await receiver.waitFor(2, 30_000);
    expect(first.map((d) => d.json.event)).toEqual(['document.uploaded', 'document.validated']);
    expect(first[1].json.data.status).toBe('valid');

    // The validated event commits with the status change, so the document is valid by now.
    await t.http().post(`/sign/${record.id}`).set('X-API-Key', tenant.apiKey).expect(202);
    const afterSign = await receiver.waitFor(3, 30_000);
    expect(afterSign[2].json.event).toBe('document.signed');
    expect(afterSign[2].json.data.status).toBe('signed');
    expect(afterSign[2].json.data.algorithm).toBe('ECDSA-P256');

    await t.http().delete(`/delete/${record.id}`).set('X-API-Key', tenant.apiKey).expect(204);
    const all = await receiver.waitFor(4, 30_000);
    // Subscribed to every event: the lifecycle of a document yields exactly the specification's four.
    expect(all.map((d) => d.json.event)).toEqual([...SPEC_EVENT_NAMES]);

    for (const d of all) {
      expect(verifySignature(SECRET, d.raw, d.headers['x-sdf-signature'])).toBe(true);
      expect(d.headers['x-sdf-event']).toBe(d.json.event);
      expect(d.headers['x-sdf-delivery']).toBe(d.json.id);
      expect(d.json.tenant_id).toBe(tenant.id);
      expect(d.json.document_id).toBe(meta.document_id);
      expect(d.json.data.document_id).toBe(meta.document_id);
      expect(d.json.data.id).toBe(record.id);
    }
  });
});
