import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxDispatcher } from '../src/webhooks/outbox-dispatcher.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

describe('outbox retention (OUTBOX_RETENTION_HOURS)', () => {
  let t: TestApp;
  let tenant: TenantFixture;

  beforeAll(async () => {
    t = await startApp({ env: { OUTBOX_RETENTION_HOURS: '24' } });
    tenant = await createTenant(t);
  });
  afterAll(() => t.close());

  /** An outbox row created and (unless null) dispatched that many hours ago. */
  const insert = async (createdHoursAgo: number, dispatchedHoursAgo: number | null): Promise<string> => {
    const [row] = await t.ds.query(
      `INSERT INTO outbox_events (tenant_id, event, payload, created_at, dispatched_at)
       VALUES ($1, 'document.deleted', '{}'::jsonb, now() - make_interval(hours => $2),
               CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(hours => $3::int) END)
       RETURNING id`,
      [tenant.id, createdHoursAgo, dispatchedHoursAgo],
    );
    return row.id as string;
  };

  it('deletes events dispatched before the retention period, and nothing else', async () => {
    const old = await Promise.all([insert(50, 49), insert(30, 25)]);
    const recent = await insert(30, 23);
    const undispatched = await insert(50, null);

    expect(await t.app.get(OutboxDispatcher).prune()).toBe(2);

    const rows: { id: string }[] = await t.ds.query(`SELECT id FROM outbox_events WHERE id = ANY($1::uuid[])`, [
      [...old, recent, undispatched],
    ]);
    expect(rows.map((r) => r.id).sort()).toEqual([recent, undispatched].sort());
    expect(await t.app.get(OutboxDispatcher).prune()).toBe(0);
  });
});
