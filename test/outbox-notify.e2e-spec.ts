import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

/**
 * An event no active webhook of its tenant subscribes to is written already dispatched and wakes no
 * dispatcher; an awaited one is written pending and wakes them (NOTIFY at commit, in commit order).
 */
describe('outbox: events nobody awaits', () => {
  let t: TestApp;
  let tenant: TenantFixture;
  let listener: pg.Client;
  const notifications: string[] = [];

  beforeAll(async () => {
    t = await startApp();
    tenant = await createTenant(t);
    listener = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await listener.connect();
    listener.on('notification', (n) => notifications.push(n.channel));
    await listener.query('LISTEN outbox_events');
  });
  afterAll(async () => {
    await listener?.end();
    await t.close();
  });

  const dispatchedAt = async (eventId: string) =>
    (await t.ds.query(`SELECT dispatched_at FROM outbox_events WHERE id = $1`, [eventId]))[0]
      .dispatched_at as Date | null;

  it('writes an unawaited event dispatched, without a wake-up; an awaited one wakes the dispatchers', async () => {
    const unawaited = await recordDocumentEvent(t, tenant.id, 'document.validated');
    expect(await dispatchedAt(unawaited.id)).toBeInstanceOf(Date);

    await registerWebhook(t, tenant.apiKey, {
      url: 'http://127.0.0.1:9/hook',
      secret: 'a-secret-of-enough-length-123',
      events: ['document.validated'],
    });
    // Another event of the same tenant that the webhook does not list: still nobody awaits it.
    const other = await recordDocumentEvent(t, tenant.id, 'document.deleted');
    expect(await dispatchedAt(other.id)).toBeInstanceOf(Date);

    await recordDocumentEvent(t, tenant.id, 'document.validated');
    const deadline = Date.now() + 10_000;
    while (notifications.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Notifications arrive in commit order: the first is the awaited event's, so the two before sent none.
    expect(notifications).toEqual(['outbox_events']);
  });
});
