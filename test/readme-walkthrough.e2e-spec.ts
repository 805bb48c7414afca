import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseFromTemplate, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import {
  distCli,
  distMain,
  freePort,
  projectRoot,
  requireBuild,
  runProgram,
  startNode,
  stop,
  type RunResult,
} from './helpers/processes.js';

/** The shell block between the walkthrough markers of README.md, exactly as a reader sees it. */
export function walkthroughScript(readme: string): string {
  const match = /<!-- walkthrough:begin -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme);
  if (!match) throw new Error('README.md has no walkthrough block');
  return match[1];
}

function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<RunResult> {
  return runProgram('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, timeoutMs: 150_000 });
}

/**
 * The README's walkthrough, taken from the README text itself, run by bash against a started service
 * (the built `node dist/src/main.js`) with its own database, Redis prefix, storage and secrets file,
 * which the service generates and the CLI then reads.
 */
describe('README walkthrough', () => {
  let database: string;
  let dir: string;
  let service: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;

  beforeAll(async () => {
    requireBuild(distMain);
    requireBuild(distCli);
    database = await createDatabaseFromTemplate(inject('templateDatabase'));
    dir = mkdtempSync(join(tmpdir(), 'sdf-walkthrough-'));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: testDatabaseUrl(database),
      DATABASE_RUN_MIGRATIONS: 'false',
      DATABASE_POOL_SIZE: '4',
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `sdfw_${randomBytes(5).toString('hex')}`,
      SECRETS_FILE: join(dir, 'secrets.json'),
      STORAGE_LOCAL_DIR: join(dir, 'storage'),
      VALIDATION_POOL_WORKERS: '1',
      LOG_LEVEL: 'info',
    };
    const started = await startNode([distMain], { ...env, PORT: String(port), HOST: '127.0.0.1' }, (line) =>
      line.includes('"listening"'),
    );
    service = started.child;
  });

  afterAll(async () => {
    if (service) await stop(service);
    if (database) await dropDatabase(database);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs every command of the README as written', { timeout: 180_000 }, async () => {
    const script = walkthroughScript(readFileSync(join(projectRoot, 'README.md'), 'utf8'));
    expect(script).toContain('sdf -- admin create-tenant');
    expect(existsSync(env.SECRETS_FILE!)).toBe(true);
    // A reader's checkout, as far as the walkthrough uses it, and the machine's temporary folder.
    const work = mkdtempSync(join(dir, 'checkout-'));
    const entries = ['package.json', 'dist', 'examples'];
    for (const entry of entries) symlinkSync(join(projectRoot, entry), join(work, entry));
    const temp = mkdtempSync(join(dir, 'tmp-'));

    const run = await runScript(script, work, { ...env, SDF_URL: baseUrl, TMPDIR: temp });
    // Nothing on stderr but npm's own warnings and what `sdf sign` says it wrote.
    const stderr = run.stderr.replace(/^npm warn .*\n/gm, '');
    expect(stderr).toMatch(/^signed \S+\/invoice\.signed\.sdf \(key id [\w-]+, ECDSA-P256\)\n$/);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.match(/VALID, trusted/g)).toHaveLength(2);
    // Everything it wrote is in one new temporary folder; the checkout is as it was.
    expect(readdirSync(work).sort()).toEqual([...entries].sort());
    const outs = readdirSync(temp).filter((name) => existsSync(join(temp, name, 'invoice.sdf')));
    expect(outs).toHaveLength(1);
    const out = outs[0];
    expect(readdirSync(join(temp, out)).sort()).toEqual(['invoice.sdf', 'invoice.signed.sdf', 'my-key', 'signed.sdf']);
    expect(existsSync(join(temp, out, 'my-key', 'private.pem'))).toBe(true);
  });
});
