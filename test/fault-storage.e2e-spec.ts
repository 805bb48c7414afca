import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

/** The S3 stand-in (s3rver) on a port of its own, its files in a folder that outlives a stop, so it can come back. */
class OwnS3 {
  private server: S3rver | null = null;
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
    this.server = new S3rver({ port: this.port, address: '127.0.0.1', silent: true, directory: this.dir });
    await this.server.run();
  }
  async stop(): Promise<void> {
    await this.server?.close();
    this.server = null;
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

describe('the S3 store goes away during uploads', () => {
  let s3: OwnS3;
  let cluster: ServiceCluster;
  let api: ServiceProcess;
  let spool: string;

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
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
    await s3?.stop();
    rmSync(s3?.dir ?? '', { recursive: true, force: true });
    rmSync(spool ?? '', { recursive: true, force: true });
  });

  it('answers 503 meanwhile; afterwards every document row has its file and every file its row', async () => {
    const tenant = await cluster.createTenant(api);
    const archive = (await buildSdf()).archive;
    const statuses: { status: number; code?: string; retryAfter?: string }[] = [];
    // A connection cut before any answer is counted apart, so one does not end a client's loop unseen.
    const cut: string[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        try {
          const res = await api.http().post('/upload').set('X-API-Key', tenant.apiKey).attach('file', archive, 'f.sdf');
          statuses.push({ status: res.status, code: res.body?.error?.code, retryAfter: res.headers['retry-after'] });
        } catch (err) {
          cut.push((err as { code?: string }).code ?? String(err));
        }
      }
    };
    const load = Promise.all([client(), client()]);
    await waitUntil(() => statuses.length >= 10, '10 uploads', 30_000);
    await s3.stop();
    const before = statuses.length;
    await waitUntil(() => statuses.slice(before).filter((s) => s.status === 503).length >= 3, 'refusals', 30_000);
    expect((await api.http().get('/health/ready')).body.checks.storage).toBe('unavailable');
    await s3.start();
    await waitUntil(() => statuses.slice(-3).every((s) => s.status === 201), 'uploads accepted again', 30_000);
    stop = true;
    await load;

    // Every answer is an upload or a refusal in the error shape; cut connections stay the exception.
    expect(cut.length).toBeLessThanOrEqual(statuses.length / 10);
    for (const s of statuses) {
      expect([201, 503]).toContain(s.status);
      if (s.status === 503) {
        expect(s.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(s.retryAfter)).toBeGreaterThan(0);
      }
    }
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
      expect(rows).toHaveLength(statuses.filter((s) => s.status === 201).length);
      const objects = await s3client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'tenants/' }));
      const keys = (objects.Contents ?? []).map((o) => o.Key!).filter((k) => k.endsWith('.sdf'));
      expect(new Set(keys)).toEqual(new Set(rows.map((r) => r.storage_key)));
    } finally {
      await db.end();
      s3client.destroy();
    }
    // No spooled body is left behind.
    expect(readdirSync(spool)).toEqual([]);
  }, 120_000);
});
