import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/processes.js';
import { buildSdf } from './helpers/sdf-fixtures.js';
import { ServiceCluster, type ServiceProcess } from './helpers/service-processes.js';
import { waitUntil } from './helpers/wait.js';

const BUCKET = 'sdf-data';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
/** The service's default S3_SOCKET_TIMEOUT_MS: a store that stopped answering fails a call after it. */
const DEFAULT_SOCKET_TIMEOUT_MS = 5_000;

/**
 * The S3 stand-in (s3rver) on a port of its own, its files in a folder that outlives a stop, so it can come
 * back; or, in its place, a store that hangs: connections accepted and read, nothing ever answered.
 */
class OwnS3 {
  private server: S3rver | null = null;
  private hung: { server: Server; sockets: Set<Socket> } | null = null;
  private readonly answering = new Set<ServerResponse>();
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}
  static async create(): Promise<OwnS3> {
    const s3 = new OwnS3(mkdtempSync(join(tmpdir(), 'sdf-own-s3-')), await freePort());
    await s3.start();
    return s3;
  }
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    const server = new S3rver({ port: this.port, address: '127.0.0.1', silent: true, directory: this.dir });
    await server.run();
    // Ahead of s3rver's own listener: once the store stops, every answer closes its connection.
    server.httpServer?.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.answering.add(res);
      res.once('close', () => this.answering.delete(res));
      if (this.server !== server) res.shouldKeepAlive = false;
    });
    this.server = server;
  }
  /**
   * The store shuts down: it finishes the requests it has begun, closes each connection after its answer
   * and takes no request more. s3rver's close() alone only stops listening: a keep-alive connection busy
   * at that moment would go on serving for as long as its client kept it busy, and the store would not
   * be gone for the uploads that use it. (Cutting connections mid-request instead can lose the answer
   * to a PUT the store completed, which leaves an object that no record names.)
   */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const res of this.answering) if (!res.headersSent) res.shouldKeepAlive = false;
    const closed = server.close();
    // A connection becomes idle once its answer is out: close it before its client sends another request.
    const sweep = setInterval(() => server.httpServer?.closeIdleConnections(), 5);
    await closed.finally(() => clearInterval(sweep));
  }
  /** In place of the store: a server that takes every connection and request and never answers. */
  async hang(): Promise<void> {
    await this.stop();
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.hung = { server, sockets };
  }
  async unhang(): Promise<void> {
    const hung = this.hung;
    this.hung = null;
    if (!hung) return;
    for (const socket of hung.sockets) socket.destroy();
    await new Promise((resolve) => hung.server.close(resolve));
  }
  client(): S3Client {
    return new S3Client({
      endpoint: this.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: CREDENTIALS,
    });
  }
}

interface Answer {
  status: number;
  code?: string;
  retryAfter?: string;
}

describe('the S3 store goes away during uploads', () => {
  let s3: OwnS3;
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let spool: string;
  let archive: Buffer;
  let apiKey: string;
  // Every upload answer of the file, in order; a connection cut before any answer is counted apart.
  const answers: Answer[] = [];
  const cut: string[] = [];

  const upload = async (): Promise<Answer> => {
    const res = await api
      .http()
      .post('/upload')
      .set('X-API-Key', apiKey)
      .attach('file', archive, 'f.sdf')
      // Far beyond the bound of a store call: an upload that reaches this waited on the store unbounded.
      .timeout(6 * DEFAULT_SOCKET_TIMEOUT_MS);
    const answer = { status: res.status, code: res.body?.error?.code, retryAfter: res.headers['retry-after'] };
    answers.push(answer);
    return answer;
  };
  const tally = (from = 0) => {
    const counts: Record<string, number> = {};
    for (const a of answers.slice(from)) counts[a.status] = (counts[a.status] ?? 0) + 1;
    return `answers ${JSON.stringify(counts)}, cut ${JSON.stringify(cut)}\n${api.dump()}`;
  };
  /** waitUntil, whose failure also tells what the uploads were answered meanwhile and the API's last lines. */
  const waitSeeing = async (probe: () => boolean, what: string, from: number, timeoutMs: number) => {
    await waitUntil(probe, what, timeoutMs).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${tally(from)}`);
    });
  };
  const storageReadiness = async () => (await api.http().get('/health/ready')).body.checks?.storage as string;

  beforeAll(async () => {
    s3 = await OwnS3.create();
    const admin = s3.client();
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
    spool = mkdtempSync(join(tmpdir(), 'sdf-s3-spool-'));
    mkdirSync(spool, { recursive: true });
    cluster = await ServiceCluster.create({
      env: {
        STORAGE_DRIVER: 's3',
        S3_ENDPOINT: s3.endpoint,
        S3_BUCKET: BUCKET,
        S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
        UPLOAD_TMP_DIR: spool,
      },
    });
    [api] = await Promise.all([cluster.start('api'), cluster.start('worker')]);
    archive = (await buildSdf()).archive;
    apiKey = (await cluster.createTenant(api)).apiKey;
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
    await s3?.unhang();
    await s3?.stop();
    rmSync(s3?.dir ?? '', { recursive: true, force: true });
    rmSync(spool ?? '', { recursive: true, force: true });
  });

  it('answers 503 with Retry-After while it is away, and takes uploads again once it is back', async () => {
    let stop = false;
    const client = async () => {
      while (!stop) {
        await upload().catch((err: unknown) => cut.push((err as { code?: string }).code ?? String(err)));
      }
    };
    const load = Promise.all([client(), client()]);
    try {
      await waitUntil(() => answers.length >= 10, '10 uploads', 30_000);
      await s3.stop();
      const before = answers.length;
      await waitSeeing(
        () => answers.slice(before).filter((a) => a.status === 503).length >= 3,
        'refusals',
        before,
        30_000,
      );
      // A readiness result is shared for READINESS_CACHE_MS: the first one asked may predate the stop.
      await waitUntil(async () => (await storageReadiness()) === 'unavailable', 'storage unready', 10_000);
      await s3.start();
      const back = answers.length;
      await waitSeeing(
        () => answers.length > back + 3 && answers.slice(-3).every((a) => a.status === 201),
        'uploads accepted again',
        back,
        30_000,
      );
      await waitUntil(async () => (await storageReadiness()) === 'ok', 'storage ready again', 10_000);
    } finally {
      stop = true;
      await load;
    }
    // Every answer is an upload or a refusal in the error shape; cut connections stay the exception.
    expect(cut.length, tally()).toBeLessThanOrEqual(answers.length / 10);
    for (const a of answers) {
      expect([201, 503]).toContain(a.status);
      if (a.status === 503) {
        expect(a.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(a.retryAfter)).toBeGreaterThan(0);
      }
    }
  }, 120_000);

  it('answers 503 within its bound when the store takes the upload and never answers', async () => {
    await s3.hang();
    try {
      // Without a bound on the store call these waited as long as the connection lived.
      const hung = await Promise.all([upload(), upload(), upload()]);
      for (const a of hung) expect(a).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      for (const a of hung) expect(Number(a.retryAfter)).toBeGreaterThan(0);
      await waitUntil(async () => (await storageReadiness()) === 'unavailable', 'storage unready', 10_000);
    } finally {
      await s3.unhang();
      await s3.start();
    }
    await waitUntil(async () => (await upload()).status === 201, 'an upload accepted again', 30_000);
  }, 60_000);

  it('afterwards every document row has its file, every file its row, and no spooled body is left', async () => {
    const db = new pg.Client({ connectionString: cluster.postgres.url });
    await db.connect();
    const s3client = s3.client();
    try {
      await waitUntil(
        async () => (await db.query(`SELECT 1 FROM documents WHERE status = 'pending'`)).rowCount === 0,
        'every document validated',
        60_000,
      );
      const rows = (await db.query<{ storage_key: string }>(`SELECT storage_key FROM documents`)).rows;
      // One row per upload answered 201; an upload whose answer was cut may or may not have been stored.
      const accepted = answers.filter((a) => a.status === 201).length;
      expect(rows.length, tally()).toBeGreaterThanOrEqual(accepted);
      expect(rows.length, tally()).toBeLessThanOrEqual(accepted + cut.length);
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3client.send(
          new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'tenants/', ContinuationToken: token }),
        );
        keys.push(...(page.Contents ?? []).map((o) => o.Key!).filter((k) => k.endsWith('.sdf')));
        token = page.NextContinuationToken;
      } while (token);
      expect(keys).toHaveLength(rows.length);
      expect(new Set(keys)).toEqual(new Set(rows.map((r) => r.storage_key)));
    } finally {
      await db.end();
      s3client.destroy();
    }
    expect(readdirSync(spool)).toEqual([]);
  }, 90_000);
});
