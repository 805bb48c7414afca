/**
 * Where one upload's time goes: N uploads, one at a time, each waited on until `valid`, in one process
 * (PROCESS_ROLE all), counting per upload the PostgreSQL statements, Redis commands, bytes read and
 * written by the process and its validation workers, and the wall time to the 201 and to `valid`.
 *
 *   npm run build && PROFILE=upload.cpuprofile node dist/bench/profile-upload.js
 *
 * With PROFILE set, the main thread's CPU profile of the measured uploads alone (not start-up or
 * warm-up) is written there; `node dist/bench/profile-summary.js upload.cpuprofile` groups its samples
 * by package (express, busboy, typeorm, pg, bullmq, ioredis, the service's own code).
 * Needs the local PostgreSQL and Redis; makes and drops its own database.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { benchArchive, benchSetup, benchTenant, median, run, startInProcess } from './harness.js';

const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 200);

// Counters: every statement the pg driver sends and every command ioredis sends, from any connection.
const counts = { pg: 0, redis: 0 };
/** While set, the text of each statement and command is kept (one upload's, printed with SHOW_STATEMENTS=1). */
let trace: string[] | undefined;
const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  counts.pg++;
  const q = args[0];
  trace?.push('pg    ' + (typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '?')));
  return pgQuery.apply(this, args);
} as typeof pg.Client.prototype.query;
const send = Redis.prototype.sendCommand as (...args: unknown[]) => unknown;
Redis.prototype.sendCommand = function (this: Redis, ...args: unknown[]) {
  counts.redis++;
  const cmd = args[0] as { name?: string; args?: unknown[] };
  trace?.push(`redis ${cmd.name ?? '?'} ${String(cmd.args?.[0] ?? '').slice(0, 60)}`);
  return send.apply(this, args);
} as typeof Redis.prototype.sendCommand;

/** rchar/wchar of this process and its children (the validation workers), from /proc. */
function ioBytes(): { read: number; written: number } {
  const pids = [String(process.pid)];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const children = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim();
    if (children) pids.push(...children.split(/\s+/));
  }
  let read = 0;
  let written = 0;
  for (const pid of pids) {
    try {
      const io = readFileSync(`/proc/${pid}/io`, 'utf8');
      read += Number(/rchar: (\d+)/.exec(io)![1]);
      written += Number(/wchar: (\d+)/.exec(io)![1]);
    } catch {
      // a worker that just exited
    }
  }
  return { read, written };
}

async function main(): Promise<void> {
  const setup = await benchSetup({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  const { db } = setup;
  const { app, url } = await startInProcess(setup);
  try {
    const key = await benchTenant(url, setup.config, 'Profile');
    const archive = await benchArchive();

    const upload = async () => {
      const body = new FormData();
      body.append('file', new Blob([archive]), 'profile.sdf');
      const t0 = performance.now();
      const res = await fetch(`${url}/upload`, { method: 'POST', headers: { 'X-API-Key': key.key }, body });
      const { id } = (await res.json()) as { id: string };
      const created = performance.now() - t0;
      if (res.status !== 201) throw new Error(`upload answered ${res.status}`);
      for (;;) {
        const { rows } = await db.query(`SELECT status FROM documents WHERE id = $1`, [id]);
        if (rows[0].status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 1));
      }
      return { created, valid: performance.now() - t0 };
    };
    for (let i = 0; i < 10; i++) await upload(); // warm-up: JIT, pool workers, connections
    if (process.env.SHOW_STATEMENTS) {
      trace = [];
      await upload();
      const seen = trace;
      trace = undefined;
      for (const line of seen) {
        if (!line.includes('SELECT status FROM documents WHERE id'))
          console.log(line.replace(/\s+/g, ' ').slice(0, 160));
      }
    }

    // The poller's own statements are not the service's: count them apart and subtract.
    const before = { ...counts, io: ioBytes() };
    let pollStatements = 0;
    const dbQuery = db.query.bind(db);
    db.query = ((...args: Parameters<typeof db.query>) => {
      pollStatements++;
      return dbQuery(...args);
    }) as typeof db.query;
    const created: number[] = [];
    const valid: number[] = [];
    const session = process.env.PROFILE ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    for (let i = 0; i < UPLOADS; i++) {
      const r = await upload();
      created.push(r.created);
      valid.push(r.valid);
    }
    const io = ioBytes();
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(process.env.PROFILE!, JSON.stringify(profile));
      session.disconnect();
    }
    const per = (n: number) => (n / UPLOADS).toFixed(1);
    console.log(`${UPLOADS} uploads of ${archive.length} bytes, one at a time, each waited on until valid`);
    console.log(`median ms to 201: ${median(created).toFixed(1)}; to valid: ${median(valid).toFixed(1)}`);
    console.log(`PostgreSQL statements per upload: ${per(counts.pg - before.pg - pollStatements)}`);
    console.log(`Redis commands per upload: ${per(counts.redis - before.redis)}`);
    console.log(
      `bytes read per upload: ${per(io.read - before.io.read)}; written: ${per(io.written - before.io.written)} ` +
        `(file ${archive.length}; includes sockets)`,
    );
  } finally {
    await app.close();
    await setup.cleanup();
  }
}

run(main);
