import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { signAdminToken } from '../../src/auth/tokens.js';
import { OwnPostgres } from './own-postgres.js';
import { OwnRedis } from './own-redis.js';
import { distMain, freePort, projectRoot, requireBuild } from './processes.js';

export type Role = 'api' | 'worker' | 'all';
export type LogLine = Record<string, unknown> & { msg?: string };

/**
 * One process of the service, run from the build (`node dist/src/main.js`) as an operator runs it. Its
 * stdout and stderr are kept: `logs` holds the JSON lines, `otherLines` anything that was not JSON.
 */
export class ServiceProcess {
  readonly logs: LogLine[] = [];
  readonly otherLines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly role: Role,
    readonly child: ChildProcess,
    readonly port: number | null,
  ) {
    const take = (stream: NodeJS.ReadableStream | null) => {
      let buffered = '';
      stream?.on('data', (d: Buffer) => {
        buffered += d.toString();
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim() === '') continue;
          try {
            this.logs.push(JSON.parse(line) as LogLine);
          } catch {
            this.otherLines.push(line);
          }
        }
      });
    };
    take(child.stdout);
    take(child.stderr);
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get url(): string {
    if (this.port === null) throw new Error('a worker process serves no HTTP');
    return `http://127.0.0.1:${this.port}`;
  }

  http() {
    return request(this.url);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** SIGKILL, as the kernel's OOM killer or a node failure does: no handler runs. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  /** Resolves with the first log line (JSON) that satisfies `match`, also one already written. */
  async waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs = 30_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.logs.find(match);
      if (line) return line;
      if (!this.running) throw new Error(`${this.role} exited before ${what}:\n${this.dump()}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${this.dump()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  dump(): string {
    return [...this.logs.slice(-40).map((l) => JSON.stringify(l)), ...this.otherLines.slice(-20)].join('\n');
  }
}

export interface ClusterOptions {
  /** Variables for every process of the cluster. */
  env?: Record<string, string>;
  /** Variables of `start()` that change by role. */
  roleEnv?: Partial<Record<Role, Record<string, string>>>;
}

/**
 * The service as separate API and worker processes (PROCESS_ROLE) on a PostgreSQL cluster and a Redis
 * server owned by the test, sharing secrets, key prefix and storage folder, as several instances behind
 * a load balancer do. Each dependency and each process can be stopped, killed and started by the test.
 */
export class ServiceCluster {
  readonly processes: ServiceProcess[] = [];
  readonly storageDir: string;
  private readonly home: string;
  private readonly secrets = {
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_JWT_SECRET: randomBytes(32).toString('hex'),
    MASTER_KEY: randomBytes(32).toString('base64'),
  };

  private constructor(
    readonly postgres: OwnPostgres,
    readonly redis: OwnRedis,
    private readonly options: ClusterOptions,
  ) {
    this.home = mkdtempSync(join(tmpdir(), 'sdf-cluster-'));
    this.storageDir = join(this.home, 'storage');
  }

  static async create(options: ClusterOptions = {}): Promise<ServiceCluster> {
    requireBuild(distMain);
    const [postgres, redis] = await Promise.all([OwnPostgres.create(), OwnRedis.create()]);
    return new ServiceCluster(postgres, redis, options);
  }

  env(role: Role, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PROCESS_ROLE: role,
      HOST: '127.0.0.1',
      DATABASE_URL: this.postgres.url,
      DATABASE_AUTO_CREATE: 'false',
      DATABASE_RUN_MIGRATIONS: 'false',
      DATABASE_POOL_SIZE: '5',
      REDIS_URL: this.redis.url,
      REDIS_PREFIX: 'sdf',
      STORAGE_LOCAL_DIR: this.storageDir,
      SECRETS_FILE: join(this.home, 'secrets.json'),
      LOG_LEVEL: 'info',
      // Every request of a test comes from one address.
      AUTH_ROUTE_LIMIT_PER_ADDRESS: '100000',
      ...this.secrets,
      ...this.options.env,
      ...this.options.roleEnv?.[role],
      ...extra,
    };
  }

  /** Starts one process and resolves once it says it is listening (API) or its workers started. */
  async start(role: Role, extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const port = role === 'worker' ? null : await freePort();
    const env = this.env(role, { ...(port === null ? {} : { PORT: String(port) }), ...extra });
    const child = spawn(process.execPath, [distMain], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = new ServiceProcess(role, child, port);
    this.processes.push(proc);
    await proc.waitForLog(
      (l) => l.msg === (role === 'worker' ? 'worker started' : 'listening'),
      `${role} to start`,
      60_000,
    );
    return proc;
  }

  adminToken(): string {
    return signAdminToken(this.secrets.ADMIN_JWT_SECRET, 'fault-test-operator', 3600);
  }

  /** A tenant and an API key, made through the admin API of `api`. */
  async createTenant(
    api: ServiceProcess,
    rateLimitRpm = 100_000,
  ): Promise<{ id: string; slug: string; apiKey: string }> {
    const slug = `fault-${randomBytes(4).toString('hex')}`;
    const admin = `Bearer ${this.adminToken()}`;
    const tenant = await api
      .http()
      .post('/admin/tenants')
      .set('Authorization', admin)
      .send({ name: `Tenant ${slug}`, slug, rate_limit_rpm: rateLimitRpm })
      .expect(201);
    const key = await api
      .http()
      .post(`/admin/tenants/${tenant.body.id}/keys`)
      .set('Authorization', admin)
      .send({ name: 'fault test' })
      .expect(201);
    return { id: tenant.body.id as string, slug, apiKey: key.body.key as string };
  }

  /** Files under the storage folder's temporary folder (partial writes, spooled uploads). */
  temporaryFiles(): { name: string; size: number }[] {
    const dir = join(this.storageDir, '.tmp');
    let names: string[];
    try {
      names = readdirSync(dir, { recursive: true }) as string[];
    } catch {
      return [];
    }
    return names
      .map((name) => ({ name, stat: statSync(join(dir, name), { throwIfNoEntry: false }) }))
      .filter((f) => f.stat?.isFile())
      .map((f) => ({ name: f.name, size: f.stat!.size }));
  }

  /** Every process gets SIGKILL, then both servers and every folder go. */
  async remove(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.kill()));
    await Promise.all([this.postgres.remove(), this.redis.remove()]);
    rmSync(this.home, { recursive: true, force: true });
  }
}
