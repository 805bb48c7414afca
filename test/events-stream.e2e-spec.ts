import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEQUENCER_LOCK } from '../migrations/1796400000000-event-sequencer-function.js';
import { EVENT_NAMES } from '../src/events/events.js';
import { EventStream, LINK_NAME } from '../src/events/event-stream.js';
import { startApp, type TestApp } from './helpers/app.js';
import { recordDocumentEvent, registerWebhook } from './helpers/events.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { StreamClient } from './helpers/sse.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const MAX_PER_TENANT = 4;
const HEARTBEAT_MS = 300;
const MAX_BUFFER = 64 * 1024;

/**
 * GET /events end to end against one API instance on a real PostgreSQL and Redis: the document events of
 * a tenant, with the webhook's bodies, in order, resumable, bounded, and never another tenant's.
 */
describe('the event stream (GET /events)', () => {
  let t: TestApp;
  let base: string;
  let tenant: TenantFixture;
  let other: TenantFixture;
  let receiver: WebhookReceiver;
  const streams: StreamClient[] = [];

  const unnumbered = async () =>
    ((await t.ds.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seq IS NULL`)) as { n: number }[])[0]!.n;

  const open = async (key: string, query = '', headers: Record<string, string> = {}) => {
    const s = await StreamClient.open(`${base}/events${query}`, { 'X-API-Key': key, ...headers });
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    t = await startApp({
      env: {
        WEBHOOK_DISPATCH_INTERVAL_MS: '50',
        EVENTS_MAX_PER_TENANT: String(MAX_PER_TENANT),
        EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS),
        EVENTS_MAX_BUFFER_BYTES: String(MAX_BUFFER),
      },
    });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await createTenant(t);
    other = await createTenant(t);
    receiver = await WebhookReceiver.start(() => 200);
  });
  afterAll(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await receiver?.close();
    await t?.close();
  });

  it('carries uploaded then valid for an upload and signed for a signing, in order, with the webhook bodies', async () => {
    await registerWebhook(t, tenant.apiKey, {
      url: receiver.url(),
      secret: 'a-secret-of-enough-length-123',
      events: [...EVENT_NAMES],
    });
    const stream = await open(tenant.apiKey);
    const foreign = await open(other.apiKey);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-cache, no-transform');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['connection']).toBe('keep-alive');
    await stream.until((s) => s.retry !== undefined, 'the retry field');
    expect(stream.retry).toBe(2000);

    const { archive } = await buildSdf();
    const up = await t.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'a.sdf');
    expect(up.status).toBe(201);
    const id = up.body.id as string;
    await stream.until((s) => s.events().length >= 2, 'uploaded and validated');
    await t.http().post(`/sign/${id}`).set('X-API-Key', tenant.apiKey).expect(202);
    await stream.until((s) => s.events().length >= 3, 'signed');

    const events = stream.events();
    expect(events.map((e) => e.event)).toEqual(['document.uploaded', 'document.validated', 'document.signed']);
    expect(events.map((e) => JSON.parse(e.data).data.status)).toEqual(['pending', 'valid', 'signed']);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(3);

    // The data of each event is byte for byte the body its webhook delivery carried.
    const deliveries = await receiver.waitFor(3, 30_000);
    for (const e of events) {
      const body = JSON.parse(e.data) as { id: string; data: { id: string } };
      expect(body.data.id).toBe(id);
      const delivery = deliveries.find((d) => d.json.id === body.id);
      expect(delivery?.raw.toString()).toBe(e.data);
    }

    // The other tenant's stream, open all along, carried none of them.
    await foreign.until((f) => f.comments.includes('heartbeat'), 'a heartbeat on the other stream');
    expect(foreign.events()).toEqual([]);
    await Promise.all([stream.close(), foreign.close()]);
  });

  it('sends a heartbeat comment every EVENTS_HEARTBEAT_MS', async () => {
    const stream = await open(tenant.apiKey);
    await stream.until((s) => s.comments.filter((c) => c === 'heartbeat').length >= 2, 'two heartbeats', 10_000);
    await stream.close();
  });

  it('resumes exactly after Last-Event-ID (header or query), filters by type and document', async () => {
    const first = await open(tenant.apiKey);
    await first.until((s) => s.retry !== undefined, 'the stream to open');
    const documentId = crypto.randomUUID();
    const recorded = [];
    for (let i = 0; i < 6; i++) {
      const name = EVENT_NAMES[i % EVENT_NAMES.length];
      recorded.push(await recordDocumentEvent(t, tenant.id, name, i % 2 === 0 ? { id: documentId } : {}));
    }
    await first.until((s) => s.events().length >= 6, 'six events');
    const all = first.events();
    expect(all.map((e) => (JSON.parse(e.data) as { id: string }).id)).toEqual(recorded.map((r) => r.id));
    await first.close();

    // Disconnected after event 3: resuming gets 4, 5, 6, none lost nor repeated.
    const resumed = await open(tenant.apiKey, '', { 'Last-Event-ID': all[2].id! });
    await resumed.until((s) => s.events().length >= 3, 'the three events after the third');
    expect(resumed.events().map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    expect(resumed.messages.filter((m) => m.event === 'stream.restarted')).toEqual([]);

    const byQuery = await open(tenant.apiKey, `?last_event_id=${all[4].id}`);
    await byQuery.until((s) => s.events().length >= 1, 'the last event');
    expect(byQuery.events().map((e) => e.id)).toEqual([all[5].id]);

    const filtered = await open(
      tenant.apiKey,
      `?types=document.uploaded,document.signed&document=${documentId}&last_event_id=${Number(all[0].id) - 1}`,
    );
    const expected = all.filter((e) => {
      const body = JSON.parse(e.data) as { event: string; data: { id: string } };
      return ['document.uploaded', 'document.signed'].includes(body.event) && body.data.id === documentId;
    });
    expect(expected.length).toBeGreaterThan(0);
    await filtered.until((s) => s.events().length >= expected.length, 'the filtered events');
    // A later event of the same document but another type does not come.
    await recordDocumentEvent(t, tenant.id, 'document.deleted', { id: documentId });
    const marker = await recordDocumentEvent(t, tenant.id, 'document.signed', { id: documentId });
    await filtered.until((s) => s.events().some((e) => e.data.includes(marker.id)), 'the marker event');
    expect(filtered.events().map((e) => e.id)).toEqual([...expected.map((e) => e.id), filtered.events().at(-1)!.id]);
    await Promise.all([resumed.close(), byQuery.close(), filtered.close()]);
  });

  it('writes one numbering of several events to live streams of one tenant, each by its own filter, in order, even past the buffer bound', async () => {
    await waitFor(() => t.app.get(EventStream).open(tenant.id) === 0);
    const [all, validated, again, otherTenant] = await Promise.all([
      open(tenant.apiKey),
      open(tenant.apiKey, '?types=document.validated'),
      open(tenant.apiKey),
      open(other.apiKey),
    ]);
    for (const s of [all, validated, again, otherTenant])
      await s.until((x) => x.retry !== undefined, 'a stream to open');
    // Held by another session, the numbering lock keeps the events unnumbered until released: then one
    // statement numbers all of them and the process writes them as one batch.
    const owner = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await owner.connect();
    const recorded = [];
    try {
      await owner.query('SELECT pg_advisory_lock($1)', [SEQUENCER_LOCK]);
      // Together past the streams' buffer bound (64 KB): a batch is not a client falling behind.
      const padding = 'x'.repeat(16 * 1024);
      for (let i = 0; i < 6; i++) {
        const name = i % 2 === 0 ? 'document.validated' : 'document.uploaded';
        recorded.push(await recordDocumentEvent(t, tenant.id, name, { padding }));
      }
      expect(await unnumbered()).toBeGreaterThanOrEqual(6);
      expect(all.events()).toEqual([]);
    } finally {
      await owner.query('SELECT pg_advisory_unlock($1)', [SEQUENCER_LOCK]);
      await owner.end();
    }
    await all.until((s) => s.events().length >= 6, 'the six events');
    await validated.until((s) => s.events().length >= 3, 'the three validated events');
    await again.until((s) => s.events().length >= 6, 'the six events on the second stream');
    const ids = (s: StreamClient) => s.events().map((e) => (JSON.parse(e.data) as { id: string }).id);
    expect(ids(all)).toEqual(recorded.map((r) => r.id));
    expect(ids(again)).toEqual(recorded.map((r) => r.id));
    expect(ids(validated)).toEqual(recorded.filter((r) => r.event === 'document.validated').map((r) => r.id));
    const numbers = all.events().map((e) => Number(e.id));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(otherTenant.events()).toEqual([]);
    await Promise.all([all.close(), validated.close(), again.close(), otherTenant.close()]);
  });

  it('wakes the numbering at each insert only while a stream is open somewhere (event_stream_presence)', async () => {
    await waitFor(() => t.app.get(EventStream).open() === 0);
    const present = async () =>
      (
        (await t.ds.query(`SELECT count(*)::int AS n FROM event_stream_presence WHERE until > now()`)) as {
          n: number;
        }[]
      )[0]!.n;
    const listener = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (n) => payloads.push(n.payload ?? ''));
    await listener.query('LISTEN outbox_events_new');
    /**
     * The wake-ups one event's insert sent: notifications come in commit order, so once a marker sent
     * after the insert's commit arrives, every wake-up of the insert has arrived before it.
     */
    let markers = 0;
    const wakeUps = async (): Promise<number> => {
      const before = payloads.length;
      await recordDocumentEvent(t, tenant.id, 'document.validated');
      const marker = `marker-${++markers}`;
      await t.ds.query(`SELECT pg_notify('outbox_events_new', $1)`, [marker]);
      const deadline = Date.now() + 10_000;
      while (!payloads.includes(marker)) {
        if (Date.now() > deadline) throw new Error('the marker did not arrive');
        await new Promise((r) => setTimeout(r, 20));
      }
      return payloads.slice(before, payloads.indexOf(marker)).length;
    };
    try {
      await waitFor(async () => (await present()) === 0);
      expect(await wakeUps()).toBe(0);
      const stream = await open(tenant.apiKey);
      await stream.until((s) => s.retry !== undefined, 'the stream to open');
      await waitFor(async () => (await present()) === 1);
      expect(await wakeUps()).toBe(1);
      await stream.until((s) => s.events().length >= 1, 'the event');
      await stream.close();
      await waitFor(async () => (await present()) === 0);
      expect(await wakeUps()).toBe(0);
    } finally {
      await listener.end();
    }
  });

  it('says where the stream restarts when the id is past the retention window', async () => {
    const old = await recordDocumentEvent(t, tenant.id, 'document.uploaded');
    const kept = await recordDocumentEvent(t, tenant.id, 'document.validated');
    const stream = await open(tenant.apiKey);
    await stream.until((s) => s.retry !== undefined, 'the stream to open');
    await recordDocumentEvent(t, tenant.id, 'document.deleted');
    await stream.until((s) => s.events().length >= 1, 'an event');
    await stream.close();
    const [oldRow] = (await t.ds.query(`SELECT seq FROM outbox_events WHERE id = $1`, [old.id])) as { seq: string }[];
    const [keptRow] = (await t.ds.query(`SELECT seq FROM outbox_events WHERE id = $1`, [kept.id])) as {
      seq: string;
    }[];
    // What the hourly pruning does to events past OUTBOX_RETENTION_HOURS: every event up to `old` goes.
    await t.ds.query(`DELETE FROM outbox_events WHERE seq <= $1`, [oldRow.seq]);
    const oldest = ((await t.ds.query(`SELECT min(seq) AS min FROM outbox_events`)) as { min: string }[])[0].min;

    const resumed = await open(tenant.apiKey, '', { 'Last-Event-ID': String(Number(oldRow.seq) - 1) });
    await resumed.until((s) => s.messages.length >= 2, 'the restart notice and an event');
    const [notice] = resumed.messages;
    expect(notice.event).toBe('stream.restarted');
    const restarted = JSON.parse(notice.data) as { reason: string; resumed_from: number };
    expect(restarted.resumed_from).toBe(Number(oldest) - 1);
    expect(notice.id).toBe(String(Number(oldest) - 1));
    expect(restarted.reason).toMatch(/retention/);
    expect(Number(resumed.events()[0].id)).toBeGreaterThanOrEqual(Number(keptRow.seq));

    // An id the service never gave (beyond its newest) restarts at the newest.
    const future = await open(tenant.apiKey, '', { 'Last-Event-ID': '999999999999' });
    await future.until((s) => s.messages.length >= 1, 'the restart notice');
    expect(future.messages[0].event).toBe('stream.restarted');
    await Promise.all([resumed.close(), future.close()]);
  });

  it('refuses unknown types, a malformed document id or Last-Event-ID with 400 naming the field', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['?types=document.uploaded,document.exploded', {}, '/types'],
      ['?document=not-a-uuid', {}, '/document'],
      ['?last_event_id=-4', {}, '/last_event_id'],
      ['', { 'Last-Event-ID': 'abc' }, '/headers/last-event-id'],
      ['?colour=red', {}, '/colour'],
    ];
    for (const [query, headers, path] of cases) {
      const s = await open(tenant.apiKey, query, headers);
      await s.ended;
      expect(s.status, query).toBe(400);
      const body = JSON.parse(s.body) as { error: { code: string; details: { path: string }[] } };
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.map((d) => d.path)).toContain(path);
    }
    const anonymous = await StreamClient.open(`${base}/events`, {});
    streams.push(anonymous);
    await anonymous.ended;
    expect(anonymous.status).toBe(401);
  });

  it('answers 429 past the per-tenant bound of open streams; another tenant is not affected', async () => {
    const held = [];
    for (let i = 0; i < MAX_PER_TENANT; i++) held.push(await open(tenant.apiKey));
    expect(held.map((s) => s.status)).toEqual(Array(MAX_PER_TENANT).fill(200));
    const refused = await open(tenant.apiKey);
    await refused.ended;
    expect(refused.status).toBe(429);
    const body = JSON.parse(refused.body) as { error: { code: string; message: string; details: unknown[] } };
    expect(body.error).toMatchObject({
      code: 'RATE_LIMITED',
      details: [{ path: '/connections', message: `must be at most ${MAX_PER_TENANT} per tenant` }],
    });
    expect(refused.headers['retry-after']).toBeDefined();
    const theirs = await open(other.apiKey);
    expect(theirs.status).toBe(200);
    // Closing one frees its place.
    await held[0].close();
    await waitFor(() => t.app.get(EventStream).open(tenant.id) < MAX_PER_TENANT);
    const again = await open(tenant.apiKey);
    expect(again.status).toBe(200);
    await Promise.all([...held.slice(1), theirs, again].map((s) => s.close()));
  });

  it('cuts a client that stops reading, and it resumes with its last id: none lost nor repeated', async () => {
    await waitFor(() => t.app.get(EventStream).open(tenant.id) === 0);
    const stream = await open(tenant.apiKey);
    await stream.until((s) => s.retry !== undefined, 'the stream to open');
    stream.pause();
    // About 16 MB of events: past every socket buffer of the loopback and the server's bound.
    const padding = 'x'.repeat(64 * 1024);
    // The last event before these: where a client that read none of them resumes. Events committed while no
    // stream was open wait for the next tick to be numbered; with this stream open they are numbered at once.
    await waitFor(async () => (await unnumbered()) === 0);
    const [{ max }] = (await t.ds.query(`SELECT coalesce(max(seq), 0)::text AS max FROM outbox_events`)) as {
      max: string;
    }[];
    const recorded: string[] = [];
    for (let i = 0; i < 250; i++) {
      recorded.push((await recordDocumentEvent(t, tenant.id, 'document.validated', { padding })).id);
    }
    // The server cut it: the tenant holds no stream any more. The events committed since are numbered on
    // the next tick (no stream is open to wake the numbering): the client resumes once they are, so it
    // reads them all from the table, at its own pace.
    await waitFor(() => t.app.get(EventStream).open(tenant.id) === 0, 30_000);
    await waitFor(async () => (await unnumbered()) === 0);
    // What arrived before the cut is read; the client resumes after the last whole event.
    await stream.close();
    const seen = stream.events().map((e) => (JSON.parse(e.data) as { id: string }).id);
    expect(seen.length).toBeLessThan(recorded.length);
    const resumed = await open(tenant.apiKey, '', { 'Last-Event-ID': stream.lastId ?? max });
    const missing = recorded.length - seen.length;
    await resumed.until((s) => s.events().length >= missing, 'the rest of the events');
    const rest = resumed.events().map((e) => (JSON.parse(e.data) as { id: string }).id);
    expect([...seen, ...rest]).toEqual(recorded);
    await resumed.close();
  });
  it('goes on when its own connection to PostgreSQL is lost: the events come through the pool meanwhile, in order, and it is made again', async () => {
    await waitFor(() => t.app.get(EventStream).open(tenant.id) === 0);
    const stream = await open(tenant.apiKey);
    await stream.until((s) => s.retry !== undefined, 'the stream to open');
    // As the owner: the service's own role may not end a connection of another session user.
    const owner = new pg.Client({ connectionString: t.config.env.DATABASE_URL });
    await owner.connect();
    const links = async () =>
      (
        await owner.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [LINK_NAME],
        )
      ).rows.map((r) => r.pid);
    try {
      const [link] = await links();
      expect(link).toBeDefined();
      await owner.query('SELECT pg_terminate_backend($1)', [link]);
      const recorded: string[] = [];
      for (let i = 0; i < 3; i++) recorded.push((await recordDocumentEvent(t, tenant.id, 'document.validated')).id);
      await stream.until((s) => s.events().length >= 3, 'the events while the connection is gone');
      // Made again (the process waits a moment first), and the events that follow come through it.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const now = await links();
        if (now.length === 1 && now[0] !== link) break;
        if (Date.now() > deadline) throw new Error('the connection was not made again');
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let i = 0; i < 2; i++) recorded.push((await recordDocumentEvent(t, tenant.id, 'document.validated')).id);
      await stream.until((s) => s.events().length >= 5, 'the events after it is made again');
      expect(stream.events().map((e) => (JSON.parse(e.data) as { id: string }).id)).toEqual(recorded);
      const ids = stream.events().map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    } finally {
      await owner.end();
      await stream.close();
    }
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the event stream through supertest', () => {
  it('answers its status and headers and the stream is closed (route walks and fuzzing stay finite)', async () => {
    const t = await startApp();
    try {
      const tenant = await createTenant(t);
      const res = await t.http().get('/events').set('X-API-Key', tenant.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      await waitFor(() => t.app.get(EventStream).open(tenant.id) === 0);
    } finally {
      await t.close();
    }
  });
});

describe('GET /v1/events on the managed deployment', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed' } });
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is the same stream under the /v1 prefix: an upload arrives on it, not on another tenant’s', async () => {
    const base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const [tenant, other] = [await createTenant(t), await createTenant(t)];
    const stream = await StreamClient.open(`${base}/v1/events`, { 'X-API-Key': tenant.apiKey });
    const foreign = await StreamClient.open(`${base}/v1/events`, { 'X-API-Key': other.apiKey });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const { archive } = await buildSdf();
      const up = await t.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'a.sdf');
      expect(up.status).toBe(201);
      await stream.until((s) => s.events().some((e) => e.event === 'document.uploaded'), 'the upload');
      expect(JSON.parse(stream.events().find((e) => e.event === 'document.uploaded')!.data)).toMatchObject({
        data: { id: up.body.id },
      });
      expect(foreign.events()).toEqual([]);
    } finally {
      await Promise.all([stream.close(), foreign.close()]);
    }
  });
});
