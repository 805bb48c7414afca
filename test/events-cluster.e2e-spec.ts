import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { projectRoot } from './helpers/processes.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { StreamClient } from './helpers/sse.js';
import { waitUntil } from './helpers/wait.js';

/**
 * The event stream across processes, run from the build as an operator runs it: two API and two worker
 * processes on one PostgreSQL and Redis. An event committed by any worker reaches the streams of every
 * API; a client resumes on a restarted API exactly where it stopped.
 */
describe('the event stream with two API and two worker processes', () => {
  let cluster: ServiceCluster;
  let apis: ServiceProcess[];
  const streams: StreamClient[] = [];
  const children: ChildProcess[] = [];

  const open = async (api: ServiceProcess | string, key: string, query = '', headers: Record<string, string> = {}) => {
    const url = typeof api === 'string' ? api : api.url;
    const s = await StreamClient.open(`${url}/events${query}`, { 'X-API-Key': key, ...headers });
    streams.push(s);
    return s;
  };
  const upload = async (api: ServiceProcess, key: string, archive: Buffer): Promise<string> => {
    const res = await api.http().post('/upload').set('X-API-Key', key).attach('file', archive, 'f.sdf');
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  /**
   * What the cluster holds when a wait runs out, so a failure says where events stopped: the tenant's
   * documents by status, its outbox rows numbered or not, the statements running (the event stream's link
   * among them) and each process's warnings and last log lines.
   */
  const situation = async (tenantId: string): Promise<string> => {
    const db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    try {
      const documents = await db.query(
        `SELECT status, count(*)::int AS n FROM documents WHERE tenant_id = $1 GROUP BY status`,
        [tenantId],
      );
      const outbox = await db.query(
        `SELECT event, count(*)::int AS n, count(seq)::int AS numbered, max(seq)::text AS max_seq
           FROM outbox_events WHERE tenant_id = $1 GROUP BY event`,
        [tenantId],
      );
      const running = await db.query(
        `SELECT application_name, state, wait_event_type, wait_event, now() - query_start AS for, left(query, 120) AS query
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
      );
      return [
        `streams: ${streams.map((s) => s.events().length).join(', ')} events`,
        `documents: ${JSON.stringify(documents.rows)}`,
        `outbox: ${JSON.stringify(outbox.rows)}`,
        `running statements: ${JSON.stringify(running.rows)}`,
        ...cluster.processes.map((p, i) => {
          // Warnings and errors (a lost listener, a failed numbering), then the last lines of all.
          const notable = p.logs.filter((l) => l.level === 'warn' || l.level === 'error').slice(-20);
          const last = p.logs.slice(-10).filter((l) => !notable.includes(l));
          return [`process ${i} (${p.role}):`, ...[...notable, ...last].map((l) => JSON.stringify(l))].join('\n');
        }),
      ].join('\n');
    } finally {
      await db.end();
    }
  };
  /** `until`, failing with the cluster's situation. */
  const until = (s: StreamClient, tenantId: string, ...args: Parameters<StreamClient['until']>) =>
    s.until(...args).catch(async (err: Error) => {
      const more = await situation(tenantId).catch(
        (e: Error) => `(what the cluster holds could not be read: ${e.message})`,
      );
      throw new Error(`${err.message}\n${more}`);
    });

  beforeAll(async () => {
    cluster = await ServiceCluster.create({ env: { EVENTS_HEARTBEAT_MS: '1000' } });
    apis = await Promise.all([cluster.start('api'), cluster.start('api')]);
    await Promise.all([cluster.start('worker'), cluster.start('worker')]);
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(streams.map((s) => s.close()));
    await cluster?.remove();
  });

  it('100 uploads through both APIs: a stream on each API sees all 100 valid events exactly once', async () => {
    const tenant = await cluster.createTenant(apis[0]!);
    const onEach = await Promise.all(apis.map((api) => open(api, tenant.apiKey, '?types=document.validated')));
    for (const s of onEach) await s.until((c) => c.retry !== undefined, 'the stream to open');
    const archives = await Promise.all(Array.from({ length: 5 }, async () => (await buildSdf()).archive));
    const accepted: string[] = [];
    let sent = 0;
    const client = async (n: number) => {
      while (sent < 100) {
        const i = sent++;
        accepted.push(await upload(apis[(i + n) % 2]!, tenant.apiKey, archives[i % archives.length]!));
      }
    };
    await Promise.all([0, 1, 2, 3].map(client));
    expect(accepted).toHaveLength(100);
    for (const s of onEach)
      await until(s, tenant.id, (c) => c.events().length >= 100, 'one hundred valid events', 120_000);
    // Whatever else would come is given the time to come: a heartbeat after the last event.
    for (const s of onEach) {
      const beats = s.comments.length;
      await s.until((c) => c.comments.length > beats, 'a heartbeat after the events');
    }
    for (const s of onEach) {
      const events = s.events();
      expect(events.every((e) => e.event === 'document.validated')).toBe(true);
      const documents = events.map((e) => (JSON.parse(e.data) as { data: { id: string; status: string } }).data);
      expect(documents.every((d) => d.status === 'valid')).toBe(true);
      expect(documents.map((d) => d.id).sort()).toEqual([...accepted].sort());
      const ids = events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    // Both APIs wrote the same events under the same ids, in the same order.
    expect(onEach[0]!.events().map((e) => e.id)).toEqual(onEach[1]!.events().map((e) => e.id));
  }, 240_000);

  it('a client that drops after event N resumes on the restarted API from N+1, none lost nor repeated; sdf watch too', async () => {
    const tenant = await cluster.createTenant(apis[1]!);
    const archive = (await buildSdf()).archive;
    // The reference: a stream on the API that stays up the whole time.
    const reference = await open(apis[1]!, tenant.apiKey);
    const dropped = await open(apis[0]!, tenant.apiKey);
    await dropped.until((c) => c.retry !== undefined, 'the stream to open');
    const port = apis[0]!.port!;
    const watcher = spawn(
      process.execPath,
      ['dist/src/cli/sdf.js', 'watch', '--url', apis[0]!.url, '--api-key', tenant.apiKey],
      { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(watcher);
    let watchOut = '';
    let watchErr = '';
    watcher.stdout!.on('data', (d: Buffer) => (watchOut += d.toString()));
    watcher.stderr!.on('data', (d: Buffer) => (watchErr += d.toString()));
    await waitUntil(() => watchErr.includes('connected'), 'sdf watch to connect', 20_000);

    // One document at a time, each validated before the next is uploaded, so the stream's order is known:
    // uploaded, then validated, document by document (uploaded back to back, a second upload may commit
    // before the first validation).
    const before = [];
    for (let i = 0; i < 3; i++) {
      before.push(await upload(apis[1]!, tenant.apiKey, archive));
      await until(
        reference,
        tenant.id,
        (c) => c.events().length >= 2 * (i + 1),
        `the events of document ${i + 1}`,
        60_000,
      );
    }
    await until(dropped, tenant.id, (c) => c.events().length >= 6, 'uploaded and validated of three documents');
    await waitUntil(() => watchOut.trim().split('\n').length >= 6, 'sdf watch to print six events', 20_000);
    const seen = dropped.events();
    const n = seen.at(-1)!.id!;

    // The API process stops (as a deployment does); its streams end, and events go on meanwhile.
    apis[0]!.signal('SIGTERM');
    await apis[0]!.exited;
    await dropped.ended;
    const after = [];
    for (let i = 0; i < 3; i++) {
      after.push(await upload(apis[1]!, tenant.apiKey, archive));
      await until(
        reference,
        tenant.id,
        (c) => c.events().length >= 6 + 2 * (i + 1),
        `the events of document ${i + 4}`,
        60_000,
      );
    }
    await until(
      reference,
      tenant.id,
      (c) => c.events().length >= 12,
      'all twelve events on the reference stream',
      60_000,
    );
    apis[0] = await cluster.start('api', { PORT: String(port) });

    const resumed = await open(`http://127.0.0.1:${port}`, tenant.apiKey, '', { 'Last-Event-ID': n });
    await until(resumed, tenant.id, (c) => c.events().length >= 6, 'the six events after N');
    const all = reference.events();
    expect(all.map((e) => e.event)).toEqual(Array(6).fill(['document.uploaded', 'document.validated']).flat());
    expect(seen.map((e) => e.id)).toEqual(all.slice(0, 6).map((e) => e.id));
    expect(resumed.events().map((e) => e.id)).toEqual(all.slice(6).map((e) => e.id));
    expect(resumed.events().map((e) => e.data)).toEqual(all.slice(6).map((e) => e.data));

    // sdf watch reconnected by itself to the restarted API and printed the rest, each event once.
    await waitUntil(() => watchOut.trim().split('\n').length >= 12, 'sdf watch to print twelve events', 60_000);
    const lines = watchOut.trim().split('\n');
    expect(lines).toHaveLength(12);
    const documents = [...before, ...after];
    lines.forEach((line, i) => {
      const [time, type, id, status] = line.split(/\s+/);
      expect(Number.isNaN(Date.parse(time!))).toBe(false);
      expect(type).toBe(i % 2 === 0 ? 'document.uploaded' : 'document.validated');
      expect(id).toBe(documents[Math.floor(i / 2)]);
      expect(status).toBe(i % 2 === 0 ? 'pending' : 'valid');
    });
    expect(watchErr).toMatch(new RegExp(`resuming after event ${n}`));
  }, 240_000);
});
