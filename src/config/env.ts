import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .or(z.boolean());

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const base64Key = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded as base64');
const secret = z.string().min(32, 'must be at least 32 characters');
/** PLAN_PRICES_DISPLAY: `plan=amount CUR/interval` entries separated by commas (read by src/billing/plan-prices.ts). */
const PRICE_ENTRY = String.raw`(?:developer|team|business)=\d{1,9}(?:\.\d{1,3})? [A-Za-z]{3}/(?:day|week|month|year)`;
const PLAN_PRICES_DISPLAY_PATTERN = new RegExp(String.raw`^\s*${PRICE_ENTRY}\s*(?:,\s*${PRICE_ENTRY}\s*)*$`);

/**
 * The one environment schema (STYLE: checked once at boot). Every variable is listed,
 * with its default, in `.env.example`; keep the two in step.
 */
export const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().default('0.0.0.0'),
  // HTTP server time-outs (README, "HTTP time-outs"): a client gets this long to send its request headers
  // (slow-header attacks), this long for a whole request (a 50 MB upload at about 0.7 Mbit/s), may stay
  // silent this long mid-request, and an idle keep-alive connection is closed after this long.
  HTTP_HEADERS_TIMEOUT_MS: positiveInt.default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt.default(600_000),
  HTTP_IDLE_TIMEOUT_MS: positiveInt.default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.default(5_000),
  // On SIGTERM: requests in flight and running jobs get this long to finish, then the process exits 0;
  // below the 10 s an orchestrator (docker stop, Kubernetes) waits before SIGKILL.
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(8_000),
  // S15: /health/ready answers from a result this old at most (0: every call checks, concurrent ones share).
  READINESS_CACHE_MS: z.coerce.number().int().min(0).default(1_000),
  DEPLOYMENT_MODE: z.enum(['self-hosted', 'managed']).default('self-hosted'),
  PROCESS_ROLE: z.enum(['api', 'worker', 'all']).default('all'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.url().optional(),

  // Prometheus metrics: GET /metrics on the API with `Authorization: Bearer <METRICS_TOKEN>`, or on a port
  // of their own (METRICS_PORT, also the worker's health probe). Neither set: no /metrics (404).
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_PORT: port.optional(),

  // OpenTelemetry: traces are exported over OTLP/HTTP when set (src/telemetry/register.ts); the other
  // standard OTEL_* variables are read by the OpenTelemetry SDK itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),

  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/sdf'),
  DATABASE_AUTO_CREATE: bool.default(true),
  DATABASE_RUN_MIGRATIONS: bool.default(true),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  // The role the service's connections act as: owns no table, held to row-level security (the second wall
  // between tenants). The migrations create it; empty: act as the connecting user (the wall is then down
  // for a superuser).
  DATABASE_APP_ROLE: z
    .string()
    .regex(/^([a-z_][a-z0-9_]{0,62})?$/, 'a PostgreSQL role name (lower case, digits, underscores) or empty')
    .default('sdf_app'),
  // S11: only `sdf admin audit-retention` reads this, never the service: a role that owns audit_log, to detach
  // and drop monthly partitions past retention. Set it where the command runs, not in the service's environment.
  AUDIT_MAINTENANCE_DATABASE_URL: z.url().optional(),

  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only')
    .default('sdf'),

  // Secrets. Left unset in self-hosted mode they are generated once into SECRETS_FILE (see secrets.ts).
  SECRETS_FILE: z.string().default('data/secrets.json'),
  JWT_SECRET: secret.optional(),
  ADMIN_JWT_SECRET: secret.optional(),
  MASTER_KEY: base64Key.optional(),
  MASTER_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9]{1,16}$/)
    .default('1'),
  MASTER_KEYS_PREVIOUS: z
    .string()
    .default('')
    .refine(
      (v) => v === '' || v.split(',').every((p) => /^[A-Za-z0-9]{1,16}:[A-Za-z0-9+/=]+$/.test(p.trim())),
      'comma-separated list of <id>:<base64 key>',
    ),

  RATE_LIMIT_DEFAULT_RPM: positiveInt.default(60),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60),
  // The portal's own pages (a signed-in user's session, managed deployment): a bucket per user of this
  // size (a burst), refilled at this many requests a minute; not the tenant's limit, not API calls.
  SESSION_RATE_LIMIT_RPM: positiveInt.default(300),
  SESSION_RATE_LIMIT_BURST: positiveInt.default(60),
  // Failed authentication per client address and window; past the limit the address gets 429.
  AUTH_FAILURE_LIMIT: positiveInt.default(30),
  AUTH_FAILURE_WINDOW_SECONDS: positiveInt.default(60),
  // Express `trust proxy`: empty (off), `true`, a hop count, or a list of addresses/subnets of the proxies
  // whose X-Forwarded-For names the client (per-address throttles and audit addresses depend on it).
  TRUST_PROXY: z.string().default(''),
  JSON_BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  // S14: largest schema the registry accepts, measured as canonical JSON.
  SCHEMA_MAX_BYTES: positiveInt.default(256 * 1024),

  MAX_UPLOAD_BYTES: positiveInt.default(50 * 1024 * 1024),
  ZIP_MAX_ENTRY_BYTES: positiveInt.default(50 * 1024 * 1024),
  ZIP_MAX_TOTAL_BYTES: positiveInt.default(200 * 1024 * 1024),
  ZIP_MAX_ENTRIES: positiveInt.default(1000),

  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  STORAGE_LOCAL_DIR: z.string().default('data/storage'),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  // Every call to the store is bounded, so an upload meets a store that went away with 503 within seconds:
  // connecting may take S3_CONNECT_TIMEOUT_MS, a connection may move no byte for S3_SOCKET_TIMEOUT_MS,
  // and a call is made S3_MAX_ATTEMPTS times at most (an upload's PUT once: its body is a stream).
  S3_CONNECT_TIMEOUT_MS: positiveInt.default(3_000),
  S3_SOCKET_TIMEOUT_MS: positiveInt.default(5_000),
  S3_MAX_ATTEMPTS: positiveInt.default(2),
  // A document's stored file or data.json copy written this long ago whose document has no record (a
  // process died between the store and the database) is removed by the workers' hourly orphan sweep.
  // Far above the time between storing an upload and recording it, so an upload in flight is never touched.
  STORAGE_ORPHAN_GRACE_MS: positiveInt.min(600_000, 'must be at least 600000 (10 minutes)').default(3_600_000),

  // /health/ready reports storage unavailable (saying why) while the local store's disk, or the upload spool's
  // folder, has less free space than this: time to add space before writes fail (then 507 STORAGE_FULL).
  // 0 turns the check off. Writes are not refused on it: only a full disk refuses them.
  STORAGE_MIN_FREE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(256 * 1024 * 1024),

  // Upload bodies are spooled here (never held in memory) before the partial read of meta.json (S2);
  // default: the local store's .tmp folder (so storing moves the file), with S3 the OS temp folder.
  UPLOAD_TMP_DIR: z.string().optional(),
  // Upload bodies (POST /upload, /sdf, /validate) one tenant may have in flight at once, across every API
  // process (counted in Redis); beyond it 429 RATE_LIMITED with Retry-After.
  UPLOADS_IN_FLIGHT_PER_TENANT: positiveInt.default(16),
  // An upload's entry in that count lasts this long unless its process renews it (every third of it): the
  // slots of an API process that died (SIGKILL, OOM) are free again within this time.
  UPLOAD_SLOT_LEASE_MS: positiveInt.min(300, 'must be at least 300').default(15_000),
  // A stalled request body, on every route (uploads and JSON alike): in every window of UPLOAD_BODY_STALL_MS
  // at least UPLOAD_BODY_MIN_BYTES must arrive, else the request is cut (408, connection closed, nothing
  // kept). Headers: HTTP_HEADERS_TIMEOUT_MS.
  UPLOAD_BODY_STALL_MS: positiveInt.default(10_000),
  UPLOAD_BODY_MIN_BYTES: positiveInt.default(10 * 1024),

  // The validation pool (F6 safety budget) and the validate-sdf workers (S9).
  // Pool processes for jobs (default: one per core, as many as fit in half the memory at their heap budget).
  VALIDATION_POOL_WORKERS: positiveInt.optional(),
  VALIDATION_TIMEOUT_MS: positiveInt.default(10_000),
  VALIDATION_MAX_MEMORY_MB: positiveInt.default(512),
  // Jobs at once per worker process (default: four per pool process; see validateJobConcurrency).
  VALIDATE_SDF_CONCURRENCY: positiveInt.optional(),
  // Validation jobs of one tenant running at once across all workers while another tenant's jobs wait
  // (default: half of the concurrency; a tenant alone uses every worker).
  VALIDATE_TENANT_CONCURRENCY: positiveInt.optional(),
  // S9: sign-sdf has its own queue and workers, so signing never waits behind a validation backlog.
  SIGN_SDF_CONCURRENCY: positiveInt.default(4),
  // Threads per worker process that run signArchive() off the event loop (default: cores but one, 1-4).
  SIGN_THREADS: positiveInt.optional(),
  // A dead worker's jobs are taken over within the sum (15 s by default). Jobs run their heavy work off
  // the event loop (validation pool, signing threads), so locks are renewed on time however busy it is.
  WORKER_LOCK_DURATION_MS: positiveInt.default(10_000),
  WORKER_STALLED_INTERVAL_MS: positiveInt.default(5_000),
  // S9: documents still pending this long after upload are enqueued again (a lost enqueue).
  PENDING_SWEEP_INTERVAL_MS: positiveInt.default(60_000),
  PENDING_SWEEP_AGE_MS: positiveInt.default(120_000),
  // The summaries of documents stored before they existed: this many a batch, a pass every interval
  // while any are left (the worker's backfill, docs/documents.md).
  SUMMARY_BACKFILL_BATCH: positiveInt.max(1000).default(50),
  SUMMARY_BACKFILL_INTERVAL_MS: positiveInt.default(5_000),
  // S9: a job that meets an outage of PostgreSQL, Redis or the store waits (doubling from 1 s up to this)
  // and is tried again without using an attempt.
  JOB_OUTAGE_MAX_DELAY_MS: positiveInt.default(30_000),

  // Managed deployment accounts (M1): mail, login throttling, session lifetime.
  SMTP_URL: z.url().optional(),
  MAIL_FROM: z.string().min(3).default('SDF <no-reply@localhost>'),
  EMAIL_RETRY_BASE_DELAY_MS: positiveInt.default(5000),
  LOGIN_FAILURE_LIMIT_PER_ACCOUNT: positiveInt.default(5),
  LOGIN_FAILURE_LIMIT_PER_ADDRESS: positiveInt.default(50),
  LOGIN_FAILURE_WINDOW_SECONDS: positiveInt.default(900),
  // TOTP tries per account across logins: three free, then a backoff doubling from the base up to the
  // maximum; this many wrong codes lock the second factor until a recovery code lifts it.
  TOTP_BACKOFF_BASE_MS: positiveInt.default(1000),
  TOTP_BACKOFF_MAX_MS: positiveInt.default(15 * 60_000),
  TOTP_LOCK_AFTER: positiveInt.default(10),
  // Requests per client address and window on each public /v1/auth route (register, login, TOTP,
  // verification resend, invitation acceptance), counted before anything else.
  AUTH_ROUTE_LIMIT_PER_ADDRESS: positiveInt.default(60),
  AUTH_ROUTE_WINDOW_SECONDS: positiveInt.default(60),
  REFRESH_TOKEN_TTL_DAYS: positiveInt.default(30),
  // The web front end's cookie renewal: for this long after a rotation, the previous refresh token is
  // answered with its successor instead of ending every session (a page left mid-renewal). 0 turns it off.
  SESSION_REFRESH_REPEAT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),

  // Webhooks (S9, S10). Unset WEBHOOK_ALLOW_PRIVATE_TARGETS follows the deployment: allowed self-hosted, refused managed.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.optional(),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_RETRY_BASE_DELAY_MS: positiveInt.default(2000),
  WEBHOOK_DISPATCH_INTERVAL_MS: positiveInt.default(1000),
  WEBHOOK_CONCURRENCY: positiveInt.default(10),
  // Deliveries of one tenant in flight at once across all workers (default: half of WEBHOOK_CONCURRENCY).
  WEBHOOK_TENANT_CONCURRENCY: positiveInt.optional(),
  // Webhooks a tenant may register.
  WEBHOOKS_PER_TENANT: positiveInt.default(10),
  // Jobs out of attempts (the dead-letter queues) are kept this long and at most this many per queue.
  FAILED_JOB_RETENTION_HOURS: positiveInt.default(720),
  FAILED_JOB_RETENTION_COUNT: positiveInt.default(10_000),
  // Dispatched outbox events are kept this long (for inspection), then deleted; webhook jobs carry their own copy.
  OUTBOX_RETENTION_HOURS: positiveInt.default(168),
  // The event stream (GET /events): a heartbeat comment this often; open streams per tenant and per API
  // process; a stream whose unsent output is past EVENTS_MAX_BUFFER_BYTES (a client not reading) when more
  // comes is cut.
  EVENTS_HEARTBEAT_MS: positiveInt.default(15_000),
  EVENTS_MAX_PER_TENANT: positiveInt.default(20),
  EVENTS_MAX_PER_PROCESS: positiveInt.default(2000),
  EVENTS_MAX_BUFFER_BYTES: positiveInt.default(1024 * 1024),

  // SAML (C1): IdP metadata refreshed this often (0: only by the admin call), each fetch cut at the time-out.
  SAML_METADATA_REFRESH_MINUTES: z.coerce.number().int().min(0).default(360),
  SAML_METADATA_TIMEOUT_MS: positiveInt.default(10_000),
  // ERP connectors (C2): each ERP call is cut at ERP_TIMEOUT_MS; 429, 5xx and connection errors are tried
  // ERP_RETRY_ATTEMPTS times in all, ERP_RETRY_BASE_DELAY_MS doubling (at least the ERP's Retry-After).
  ERP_TIMEOUT_MS: positiveInt.default(30_000),
  ERP_RETRY_ATTEMPTS: positiveInt.default(4),
  ERP_RETRY_BASE_DELAY_MS: positiveInt.default(1000),
  // The erp-push job: attempts and exponential backoff base, jobs at once per worker process.
  ERP_PUSH_ATTEMPTS: positiveInt.default(5),
  ERP_PUSH_RETRY_BASE_DELAY_MS: positiveInt.default(10_000),
  ERP_PUSH_CONCURRENCY: positiveInt.default(4),
  // Health: a result is reused this long; the worker checks due connectors every ERP_HEALTH_INTERVAL_MS.
  ERP_HEALTH_CACHE_SECONDS: positiveInt.default(60),
  ERP_HEALTH_INTERVAL_MS: positiveInt.default(60_000),
  // Managed deployment (M3): usage counted in Redis is written to PostgreSQL this often.
  USAGE_FLUSH_INTERVAL_MS: positiveInt.default(10_000),
  // Stripe. Without STRIPE_SECRET_KEY checkout and portal answer 503 BILLING_NOT_CONFIGURED.
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  STRIPE_PRICE_DEVELOPER: z.string().optional(),
  STRIPE_PRICE_TEAM: z.string().optional(),
  STRIPE_PRICE_BUSINESS: z.string().optional(),
  // Where Checkout and the customer portal send the customer back.
  STRIPE_RETURN_URL: z.url().optional(),
  // Another Stripe API endpoint (scheme, host and port), e.g. a stand-in for tests. Unset: Stripe's own.
  STRIPE_API_BASE: z.url().optional(),
  // The paid plans' prices shown on the plan page where Stripe is not configured (with Stripe, its prices):
  // `developer=19 EUR/month,team=99 EUR/month,business=399 EUR/month`.
  PLAN_PRICES_DISPLAY: z
    .string()
    .regex(PLAN_PRICES_DISPLAY_PATTERN, 'expected entries like team=99 EUR/month, separated by commas')
    .optional(),
});

/**
 * Requirements that depend on other settings. Checked on the raw values so that they are reported
 * together with the schema's own problems (zod skips refinements once a field fails).
 */
function conditionalProblems(raw: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (raw.DEPLOYMENT_MODE === 'managed') {
    // Managed deployments never run on generated secrets: several hosts must agree on them.
    for (const name of ['JWT_SECRET', 'ADMIN_JWT_SECRET', 'MASTER_KEY']) {
      if (!raw[name]) problems.push(`${name}: required in managed mode`);
    }
  }
  if (raw.STORAGE_DRIVER === 's3') {
    for (const name of ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
      if (!raw[name]) problems.push(`${name}: required when STORAGE_DRIVER=s3`);
    }
  }
  if (raw.STRIPE_SECRET_KEY) {
    for (const name of [
      'STRIPE_WEBHOOK_SECRET',
      'STRIPE_PRICE_DEVELOPER',
      'STRIPE_PRICE_TEAM',
      'STRIPE_PRICE_BUSINESS',
      'STRIPE_RETURN_URL',
    ]) {
      if (!raw[name]) problems.push(`${name}: required when STRIPE_SECRET_KEY is set`);
    }
  }
  const headers = Number(raw.HTTP_HEADERS_TIMEOUT_MS ?? 20_000);
  const request = Number(raw.HTTP_REQUEST_TIMEOUT_MS ?? 600_000);
  if (headers > request) problems.push('HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS');
  if (raw.JWT_SECRET && raw.JWT_SECRET === raw.ADMIN_JWT_SECRET) {
    problems.push('ADMIN_JWT_SECRET: must differ from JWT_SECRET');
  }
  return problems;
}

export type Env = z.infer<typeof envSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose empty value means something other than "unset". */
const EMPTY_IS_A_VALUE = new Set(['DATABASE_APP_ROLE']);

export function parseEnv(source: NodeJS.ProcessEnv): Env {
  // Empty strings count as unset, so `FOO=` in a .env file means "use the default"; except where empty is a
  // value of its own (DATABASE_APP_ROLE= connects as the connecting user itself).
  const cleaned: Record<string, string | undefined> = Object.fromEntries(
    Object.entries(source).filter(([k, v]) => v !== undefined && (v !== '' || EMPTY_IS_A_VALUE.has(k))),
  );
  const result = envSchema.safeParse(cleaned);
  const problems = [
    ...(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)),
    ...conditionalProblems(cleaned),
  ];
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}
