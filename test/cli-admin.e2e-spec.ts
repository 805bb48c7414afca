import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, startApp, type TestApp } from './helpers/app.js';
import { adminClient, testDatabaseUrl } from './helpers/database.js';
import { distCli, projectRoot, requireBuild, runNode } from './helpers/processes.js';

/** The operator's way in (S6): the built `sdf admin` commands against the same database and secrets. */
// Each test starts the command several times, a whole Node program each: on a busy machine that takes
// longer than the ordinary end-to-end budget, without anything being wrong.
describe('sdf admin (operator CLI)', { timeout: 180_000 }, () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    requireBuild(distCli);
    t = await startApp();
    env = cliEnvOf(t);
  });
  afterAll(() => t.close());

  it('mints an admin token, creates a tenant and a key that the API then accepts, all audited', async () => {
    const token = await runNode([distCli, 'admin', 'token', '--subject', 'alice', '--ttl', '600'], env);
    expect(token.code).toBe(0);
    const adminJwt = token.stdout.trim();

    const slug = `cli-${randomBytes(3).toString('hex')}`;
    const created = await runNode([distCli, 'admin', 'create-tenant', '--name', 'CLI Tenant', '--slug', slug], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const tenant = JSON.parse(created.stdout) as { id: string; slug: string };
    expect(tenant.slug).toBe(slug);

    const key = await runNode([distCli, 'admin', 'create-key', '--tenant', slug, '--name', 'bootstrap'], env);
    expect(key.code).toBe(0);
    const { key: rawKey } = JSON.parse(key.stdout) as { key: string };

    const whoami = await t.http().get('/tenant').set('X-API-Key', rawKey).expect(200);
    expect(whoami.body.tenant.id).toBe(tenant.id);
    const read = await t
      .http()
      .get(`/admin/tenants/${tenant.id}`)
      .set('Authorization', `Bearer ${adminJwt}`)
      .expect(200);
    expect(read.body.slug).toBe(slug);

    const audit: { action: string; actor: string }[] = await t.ds.query(
      `SELECT action, actor FROM audit_log WHERE tenant_id = $1 AND action IN ('tenant.create', 'api_key.create') ORDER BY created_at`,
      [tenant.id],
    );
    expect(audit.map((r) => r.action)).toEqual(['tenant.create', 'api_key.create']);
    for (const row of audit) expect(row.actor).toMatch(/^admin:cli:/);
  });

  it('exits with 2 and a message on bad input, and 1 when the tenant does not exist', async () => {
    const bad = await runNode([distCli, 'admin', 'create-tenant', '--name', 'X', '--slug', 'Not A Slug'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/slug/);
    const missing = await runNode([distCli, 'admin', 'create-key', '--tenant', 'no-such-tenant', '--name', 'k'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Tenant not found/);
    const dup = await runNode([distCli, 'admin', 'create-tenant', '--name', 'A', '--slug', 'dup-cli'], env);
    expect(dup.code).toBe(0);
    const again = await runNode([distCli, 'admin', 'create-tenant', '--name', 'B', '--slug', 'dup-cli'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
  });

  it('tenant-token takes the tenant slug as well as its id; an unknown slug is 1, a malformed one 2', async () => {
    const slug = `tok-${randomBytes(3).toString('hex')}`;
    const created = await runNode([distCli, 'admin', 'create-tenant', '--name', 'Token Tenant', '--slug', slug], env);
    const tenant = JSON.parse(created.stdout) as { id: string };
    for (const ref of [slug, tenant.id]) {
      const minted = await runNode([distCli, 'admin', 'tenant-token', '--tenant', ref], env);
      expect(minted.code, ref).toBe(0);
      const whoami = await t.http().get('/tenant').set('Authorization', `Bearer ${minted.stdout.trim()}`).expect(200);
      expect(whoami.body.tenant.id).toBe(tenant.id);
    }
    const unknown = await runNode([distCli, 'admin', 'tenant-token', '--tenant', 'no-such-tenant'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Tenant not found/);
    expect(unknown.stdout).toBe('');
    const malformed = await runNode([distCli, 'admin', 'tenant-token', '--tenant', 'Not A Slug'], env);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--tenant/);
  });

  it('rotates the master key: every sealed secret ends under the new key id, and no key is printed', async () => {
    const newKey = randomBytes(32).toString('base64');
    const rotated = await runNode([distCli, 'admin', 'rotate-master-key'], {
      ...env,
      MASTER_KEY: newKey,
      MASTER_KEY_ID: '2',
      MASTER_KEYS_PREVIOUS: `1:${env.MASTER_KEY}`,
    });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const report = JSON.parse(rotated.stdout) as { currentKeyId: string; resealed: number };
    expect(report.currentKeyId).toBe('2');
    expect(report.resealed).toBeGreaterThan(0);
    expect(rotated.stdout).not.toContain(newKey);
    const rows: { private_key_enc: string }[] = await t.ds.query(`SELECT private_key_enc FROM signing_keys`);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.private_key_enc).toMatch(/^v2\./);
  });

  describe('run from another folder', () => {
    let elsewhere: string;
    beforeAll(() => {
      elsewhere = mkdtempSync(join(tmpdir(), 'sdf-cli-cwd-'));
    });
    afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

    const withoutSecrets = () => {
      const rest = { ...env };
      delete rest.JWT_SECRET;
      delete rest.ADMIN_JWT_SECRET;
      delete rest.MASTER_KEY;
      return rest;
    };

    it("uses the service's secrets file, and the service accepts what it mints", async () => {
      const secretsFile = join(elsewhere, 'service-secrets.json');
      writeFileSync(
        secretsFile,
        JSON.stringify({
          jwt_secret: t.config.secrets.jwtSecret,
          admin_jwt_secret: t.config.secrets.adminJwtSecret,
          master_key: env.MASTER_KEY,
        }),
        { mode: 0o600 },
      );
      const token = await runNode(
        [distCli, 'admin', 'token', '--subject', 'bob'],
        { ...withoutSecrets(), SECRETS_FILE: secretsFile },
        undefined,
        elsewhere,
      );
      expect(token.code).toBe(0);
      await t
        .http()
        .get('/admin/queues/sign-sdf/failed')
        .set('Authorization', `Bearer ${token.stdout.trim()}`)
        .expect(200);
    });

    it('refuses without secrets, naming the file it looked at (resolved against the project), and writes none', async () => {
      const relative = `data/absent-${randomBytes(4).toString('hex')}.json`;
      const run = await runNode(
        [distCli, 'admin', 'token'],
        { ...withoutSecrets(), SECRETS_FILE: relative },
        undefined,
        elsewhere,
      );
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(join(projectRoot, relative));
      expect(existsSync(join(projectRoot, relative))).toBe(false);
      expect(existsSync(join(elsewhere, relative))).toBe(false);
    });

    it('a mistyped DATABASE_URL is an error naming the database, never a new database', async () => {
      const name = `sdf_typo_${randomBytes(4).toString('hex')}`;
      const run = await runNode(
        [distCli, 'admin', 'create-tenant', '--name', 'Typo', '--slug', 'typo'],
        { ...env, DATABASE_URL: testDatabaseUrl(name), DATABASE_AUTO_CREATE: 'true' },
        undefined,
        elsewhere,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`database "${name}"`);
      expect(run.stderr).toMatch(/does not exist/);
      const client = await adminClient();
      try {
        const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        expect(found.rowCount).toBe(0);
      } finally {
        await client.end();
      }
    });
  });

  it('tenant-token refuses a subject the service would refuse (exit 2), and mints one it accepts', async () => {
    const tenantId = '00000000-0000-4000-8000-000000000001';
    for (const subject of ['has space', 'x'.repeat(129), 'a/b', '']) {
      const bad = await runNode([distCli, 'admin', 'tenant-token', '--tenant', tenantId, '--subject', subject], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--subject/);
      expect(bad.stdout).toBe('');
    }
    const good = await runNode(
      [distCli, 'admin', 'tenant-token', '--tenant', tenantId, '--subject', 'svc.erp@acme:1'],
      env,
    );
    expect(good.code).toBe(0);
    expect(good.stdout.trim().split('.')).toHaveLength(3);
  });
});
