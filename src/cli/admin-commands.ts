import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { AUDIT_RETENTION_YEARS, AuditRetentionRefusal, applyAuditRetention } from '../audit/audit-retention.js';
import type { AppConfig } from '../config/app-config.js';
import { CliUsageError } from './format-commands.js';

/** The operator's way in (S6): mint admin tokens and bootstrap tenants and keys from the command line. */

/** Raised when the command line refuses to act on this configuration (exit 1, with the reason). */
export class CliRefusal extends Error {}

/**
 * The service's configuration, paths resolved against the project. The command line never generates
 * secrets: without the service's secrets file (or the variables) it refuses and names the file.
 */
async function loadConfig(overrides: NodeJS.ProcessEnv = {}): Promise<AppConfig> {
  const [{ AppConfig }, { SecretsMissingError }] = await Promise.all([
    import('../config/app-config.js'),
    import('../config/secrets.js'),
  ]);
  try {
    return AppConfig.fromEnv({ ...process.env, ...overrides }, { generateSecrets: false });
  } catch (err) {
    if (err instanceof SecretsMissingError) throw new CliRefusal(err.message);
    throw err;
  }
}

function operatorActor(): string {
  let name = 'operator';
  try {
    name = userInfo().username || name;
  } catch {
    // no passwd entry (containers): keep the generic name
  }
  return `admin:cli:${name}`;
}

/**
 * Runs `fn` inside an application context (database migrated, no HTTP listener, no job workers), so
 * the command line goes through the same services, transactions and audit entries as the admin API.
 */
async function withServices<T>(fn: (get: Get) => Promise<T>): Promise<T> {
  const [
    { NestFactory },
    { AppModule },
    { assertDatabaseReady, DatabaseNotReadyError },
    { JsonLogger },
    { assertMasterKeys, MasterKeyMismatchError },
  ] = await Promise.all([
    import('@nestjs/core'),
    import('../app.module.js'),
    import('../database/data-source.js'),
    import('../common/logger.js'),
    import('../common/master-key-check.js'),
  ]);
  const config = await loadConfig({ PROCESS_ROLE: 'api' });
  const logger = new JsonLogger(process.env.LOG_LEVEL === 'debug' ? 'debug' : 'error', (line) =>
    process.stderr.write(line + '\n'),
  );
  // Only the service creates and migrates databases (DATABASE_AUTO_CREATE is the service's setting).
  try {
    await assertDatabaseReady(config.env.DATABASE_URL);
  } catch (err) {
    if (err instanceof DatabaseNotReadyError) throw new CliRefusal(err.message);
    throw err;
  }
  // S7: nothing is sealed or opened under a master key that is not the data's.
  try {
    await assertMasterKeys(config.env.DATABASE_URL, config.secrets);
  } catch (err) {
    if (err instanceof MasterKeyMismatchError) throw new CliRefusal(err.message);
    throw err;
  }
  const ctx = await NestFactory.createApplicationContext(AppModule.register(config), { logger, abortOnError: false });
  try {
    return await fn((token) => ctx.get(token));
  } finally {
    await ctx.close();
  }
}

type Get = <S>(token: new (...args: never[]) => S) => S;

/** The tenant named by `--tenant`: its id (UUID) or its slug. Unknown: "Tenant not found" (exit 1). */
async function tenantOf(get: Get, idOrSlug: string): Promise<{ id: string }> {
  const [{ TenantsRepository }, { AppError }, { isUuid }] = await Promise.all([
    import('../tenants/tenants.repository.js'),
    import('../common/errors.js'),
    import('../common/uuid.pipe.js'),
  ]);
  const tenants = get(TenantsRepository);
  const tenant = isUuid(idOrSlug) ? await tenants.findById(idOrSlug) : await tenants.findBySlug(idOrSlug);
  if (!tenant) throw AppError.notFound('Tenant');
  return tenant;
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('operator commands: admin tokens, tenants, API keys, audit retention');

  admin
    .command('token')
    .description('mint an admin JWT (HS256, admin secret) for the /admin API')
    .option('--subject <name>', 'who the token is for (the audit actor becomes admin:<name>)', 'operator')
    .option('--ttl <seconds>', 'lifetime in seconds', '3600')
    .action(async (opts: { subject: string; ttl: string }) => {
      const ttl = parsePositive(opts.ttl, '--ttl');
      const { signAdminToken } = await import('../auth/tokens.js');
      const config = await loadConfig();
      process.stdout.write(signAdminToken(config.secrets.adminJwtSecret, opts.subject, ttl) + '\n');
    });

  admin
    .command('dashboard-link')
    .description('print a one-time link to the queue dashboard (valid 5 minutes; opening it sets a 15-minute session)')
    .option('--subject <name>', 'who the link is for (audit actor admin:<name>)', 'operator')
    .option(
      '--base-url <url>',
      'the service as the browser reaches it (default PUBLIC_BASE_URL, else http://localhost:PORT)',
    )
    .action(async (opts: { subject: string; baseUrl?: string }) => {
      const { signDashboardLink, DASHBOARD_PATH } = await import('../queue/dashboard.js');
      const config = await loadConfig();
      const base = (opts.baseUrl ?? config.env.PUBLIC_BASE_URL ?? `http://localhost:${config.env.PORT}`).replace(
        /\/+$/,
        '',
      );
      const ticket = signDashboardLink(config.secrets.adminJwtSecret, opts.subject);
      process.stdout.write(`${base}${DASHBOARD_PATH}/login?ticket=${ticket}\n`);
    });

  admin
    .command('tenant-token')
    .description('mint a tenant JWT (HS256) for a service account of a tenant')
    .requiredOption('--tenant <id-or-slug>', 'tenant id (UUID) or slug')
    .option('--subject <id>', 'the sub claim: user or service id', 'service')
    .action(async (opts: { tenant: string; subject: string }) => {
      const [{ signTenantToken, SUBJECT }, { isUuid }, { SLUG_PATTERN }] = await Promise.all([
        import('../auth/tokens.js'),
        import('../common/uuid.pipe.js'),
        import('../admin/dto/tenant.dto.js'),
      ]);
      // The service refuses a token whose sub breaks this rule; minting one would only fail later.
      if (!SUBJECT.test(opts.subject)) {
        throw new CliUsageError('--subject must be 1 to 128 of A-Z a-z 0-9 . _ @ : -');
      }
      if (!isUuid(opts.tenant) && !SLUG_PATTERN.test(opts.tenant)) {
        throw new CliUsageError('--tenant must be a tenant id (UUID) or slug');
      }
      // An id is minted for as given (no database needed); a slug is looked up.
      const tenantId = isUuid(opts.tenant)
        ? opts.tenant
        : await withServices(async (get) => (await tenantOf(get, opts.tenant)).id);
      const config = await loadConfig();
      process.stdout.write(
        signTenantToken(
          config.secrets.jwtSecret,
          { tenant_id: tenantId, sub: opts.subject },
          config.tenantTokenTtlSeconds,
        ) + '\n',
      );
    });

  admin
    .command('create-tenant')
    .description('create a tenant (prints it as JSON)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--slug <slug>', 'URL-safe unique identifier')
    .option('--rate-limit-rpm <n>', 'requests per minute (default 60)')
    .action(async (opts: { name: string; slug: string; rateLimitRpm?: string }) => {
      const input = {
        name: opts.name,
        slug: opts.slug,
        rate_limit_rpm: opts.rateLimitRpm ? parsePositive(opts.rateLimitRpm, '--rate-limit-rpm') : undefined,
      };
      await validateDto('tenant', input);
      const { AdminService } = await import('../admin/admin.service.js');
      print(await withServices((get) => get(AdminService).createTenant(input, { actor: operatorActor(), ip: null })));
    });

  admin
    .command('create-key')
    .description('create an API key for a tenant (the raw key is printed only this once)')
    .requiredOption('--tenant <id-or-slug>', 'tenant id or slug')
    .requiredOption('--name <name>', 'what the key is for')
    .option('--expires-at <iso>', 'expiry, ISO 8601 UTC')
    .action(async (opts: { tenant: string; name: string; expiresAt?: string }) => {
      const input = { name: opts.name, expires_at: opts.expiresAt };
      await validateDto('key', input);
      const { AdminService } = await import('../admin/admin.service.js');
      print(
        await withServices(async (get) => {
          const tenant = await tenantOf(get, opts.tenant);
          return get(AdminService).createApiKey(tenant.id, input, { actor: operatorActor(), ip: null });
        }),
      );
    });

  admin
    .command('rotate-master-key')
    .description('re-encrypt every stored secret under the current MASTER_KEY; prints counts, never keys')
    .action(async () => {
      const [{ DataSource }, { CryptoBox }, { SealedSecrets }, { rotateMasterKey }] = await Promise.all([
        import('typeorm'),
        import('../common/crypto-box.js'),
        import('../common/sealed-secrets.js'),
        import('../signing/master-key-rotation.js'),
      ]);
      print(await withServices((get) => rotateMasterKey(get(DataSource), get(CryptoBox), get(SealedSecrets))));
    });

  admin
    .command('audit-retention')
    .description(
      'detach and drop the monthly audit_log partitions past retention (7 years), connecting with ' +
        'AUDIT_MAINTENANCE_DATABASE_URL (a role that owns audit_log); prints them as JSON',
    )
    .option(
      '--years <n>',
      `keep entries this many years (at least ${AUDIT_RETENTION_YEARS})`,
      `${AUDIT_RETENTION_YEARS}`,
    )
    .option('--dry-run', 'only list the partitions past retention')
    .action(async (opts: { years: string; dryRun?: boolean }) => {
      const years = parsePositive(opts.years, '--years');
      if (years < AUDIT_RETENTION_YEARS) {
        throw new CliUsageError(`--years must be at least ${AUDIT_RETENTION_YEARS} (audit entries are kept 7 years)`);
      }
      const [{ parseEnv }, { default: pg }] = await Promise.all([import('../config/env.js'), import('pg')]);
      // Never the service's DATABASE_URL: the service's role may add partitions but must not be the one dropping them.
      const url = parseEnv(process.env).AUDIT_MAINTENANCE_DATABASE_URL;
      if (!url) {
        throw new CliRefusal(
          'AUDIT_MAINTENANCE_DATABASE_URL is not set: audit retention connects as a role that owns audit_log, ' +
            "never with the service's DATABASE_URL",
        );
      }
      const client = new pg.Client({ connectionString: url, application_name: 'sdf admin audit-retention' });
      await client.connect();
      try {
        print(await applyAuditRetention(client, { years, dryRun: opts.dryRun === true, actor: operatorActor() }));
      } catch (err) {
        if (err instanceof AuditRetentionRefusal) throw new CliRefusal(err.message);
        throw err;
      } finally {
        await client.end();
      }
    });
}

function parsePositive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliUsageError(`${flag} must be a positive integer`);
  return n;
}

/** The same class-validator rules as the admin API's request bodies. */
async function validateDto(kind: 'tenant' | 'key', input: object): Promise<void> {
  const [{ plainToInstance }, { validate }, { CreateTenantDto }, { CreateApiKeyDto }] = await Promise.all([
    import('class-transformer'),
    import('class-validator'),
    import('../admin/dto/tenant.dto.js'),
    import('../admin/dto/api-key.dto.js'),
  ]);
  const cls = kind === 'tenant' ? CreateTenantDto : CreateApiKeyDto;
  const errors = await validate(plainToInstance(cls as new () => object, input), { whitelist: true });
  if (errors.length) {
    throw new CliUsageError(errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; '));
  }
}
