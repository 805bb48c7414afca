import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/bootstrap.js';
import { JsonLogger } from '../src/common/logger.js';
import { MasterKeyMismatchError } from '../src/common/master-key-check.js';
import { AppConfig } from '../src/config/app-config.js';
import { cliEnvOf, startApp, type TestApp } from './helpers/app.js';
import { distCli, requireBuild, runNode } from './helpers/processes.js';
import { createTenant } from './helpers/tenants.js';

/** The check value as S7 defines it: HMAC-SHA-256 of the fixed label under the master key, hex. */
const checkOf = (key: Buffer) => createHmac('sha256', key).update('sdf master key check v1').digest('hex');

describe('master key check values (S7): a process with another master key refuses to start', () => {
  const k1 = randomBytes(32);
  const other = randomBytes(32);
  const dir = mkdtempSync(join(tmpdir(), 'sdf-master-check-'));
  const otherSecrets = join(dir, 'other-secrets.json');
  let t: TestApp;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    requireBuild(distCli);
    t = await startApp({ env: { MASTER_KEY: k1.toString('base64'), MASTER_KEY_ID: '1' } });
    env = cliEnvOf(t);
    // Secrets sealed under key 1: the tenant's signing key.
    await createTenant(t);
    // Another installation's secrets file: the right JWT secrets, another master key.
    writeFileSync(
      otherSecrets,
      JSON.stringify({
        jwt_secret: t.config.secrets.jwtSecret,
        admin_jwt_secret: t.config.secrets.adminJwtSecret,
        master_key: other.toString('base64'),
      }),
      { mode: 0o600 },
    );
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const checks = () => t.ds.query(`SELECT key_id, check_value FROM master_key_checks ORDER BY key_id`);
  const withoutMasterKey = (): NodeJS.ProcessEnv => {
    const rest = { ...env };
    delete rest.MASTER_KEY;
    return rest;
  };
  const boot = (source: NodeJS.ProcessEnv) =>
    createApp(AppConfig.fromEnv(source, { generateSecrets: false }), new JsonLogger('silent'));

  it('records the check value of the key the data is sealed with, per key id, and no key', async () => {
    expect(await checks()).toEqual([{ key_id: '1', check_value: checkOf(k1) }]);
  });

  it('the service refuses another master key from a secrets file, naming the file and both key ids', async () => {
    const failure = boot({ ...withoutMasterKey(), SECRETS_FILE: otherSecrets });
    await expect(failure).rejects.toBeInstanceOf(MasterKeyMismatchError);
    const message = ((await failure.catch((err: unknown) => err)) as Error).message;
    expect(message).toContain(`the secrets file ${otherSecrets}`);
    expect(message).toContain(
      `configured key id 1 (from the secrets file ${otherSecrets}, check value ${checkOf(other).slice(0, 12)})`,
    );
    expect(message).toContain(`key id 1 the stored secrets were sealed with (check value ${checkOf(k1).slice(0, 12)})`);
    expect(message).not.toContain(other.toString('base64'));
    expect(await checks()).toEqual([{ key_id: '1', check_value: checkOf(k1) }]);
  });

  it('names the MASTER_KEY variable, and refuses a new key id when the old key is not kept beside it', async () => {
    const viaEnv = boot({ ...env, MASTER_KEY: other.toString('base64') });
    await expect(viaEnv).rejects.toThrow(/configured key id 1 \(from the MASTER_KEY environment variable/);
    const newId = boot({ ...env, MASTER_KEY: other.toString('base64'), MASTER_KEY_ID: '2' });
    await expect(newId).rejects.toThrow(
      /sealed under key id 1 \(check value [0-9a-f]{12}\), and none is configured: configured key id 2 \(from the MASTER_KEY environment variable/,
    );
    expect(await checks()).toEqual([{ key_id: '1', check_value: checkOf(k1) }]);
  });

  it('sdf admin refuses the same way (exit 1), naming the file and both key ids, and creates nothing', async () => {
    const slug = `mk-${randomBytes(3).toString('hex')}`;
    const run = await runNode([distCli, 'admin', 'create-tenant', '--name', 'Wrong key', '--slug', slug], {
      ...withoutMasterKey(),
      SECRETS_FILE: otherSecrets,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`configured key id 1 (from the secrets file ${otherSecrets}`);
    expect(run.stderr).toContain('key id 1 the stored secrets were sealed with');
    expect(await t.ds.query(`SELECT id FROM tenants WHERE slug = $1`, [slug])).toEqual([]);
  });

  it('a rotation records the new key check value and drops the old one; the old key alone is then refused', async () => {
    const k2 = randomBytes(32);
    const rotated = await runNode([distCli, 'admin', 'rotate-master-key'], {
      ...env,
      MASTER_KEY: k2.toString('base64'),
      MASTER_KEY_ID: '2',
      MASTER_KEYS_PREVIOUS: `1:${k1.toString('base64')}`,
    });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(await checks()).toEqual([{ key_id: '2', check_value: checkOf(k2) }]);

    await expect(boot(env)).rejects.toThrow(/sealed under key id 2 .* configured key id 1 /);
    const withNewKey = await boot({ ...env, MASTER_KEY: k2.toString('base64'), MASTER_KEY_ID: '2' });
    await withNewKey.close();
  });
});
