import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';

/**
 * A redis-server of the test's own, on a free loopback port with no persistence, which the test may kill
 * and start again (empty, as after a crash). The machine's shared Redis is never touched.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<OwnRedis> {
    const own = new OwnRedis(mkdtempSync(join(tmpdir(), 'sdf-own-redis-')), await freePort());
    await own.start();
    return own;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) return;
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      { stdio: 'ignore' },
    );
    this.child = child;
    const probe = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const deadline = Date.now() + 10_000;
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        try {
          if (probe.status !== 'ready') await probe.connect();
          await probe.ping();
          return;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          probe.disconnect();
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      probe.disconnect();
    }
  }

  /** Gone at once, as in a crash (SIGKILL): its data goes with it, since nothing is persisted. */
  kill(): Promise<void> {
    return this.signal('SIGKILL');
  }

  /**
   * Frozen (SIGSTOP), as a server that hangs: its connections stay open and take commands, but nothing is
   * answered until `thaw()` (SIGCONT); its data stays.
   */
  freeze(): void {
    if (this.running) this.child!.kill('SIGSTOP');
  }

  thaw(): void {
    if (this.running) this.child!.kill('SIGCONT');
  }

  private signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }

  async remove(): Promise<void> {
    await this.signal('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
