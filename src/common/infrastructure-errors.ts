/** Node's network error codes that mean "the other side is not there (yet)", never "your input is wrong". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The store's client (the AWS SDK's HTTP handler) names a connection that was not made in time, or that
 * stopped moving bytes, `TimeoutError`, without a code.
 */
const UNAVAILABLE_NAMES = new Set(['TimeoutError']);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 57P01-57P03
 * (shut down, crashed, starting up), 53300 (too many connections) and 40001/40P01 are not here: a
 * serialization failure is the statement's, retried by the job's own attempts.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Messages of node-postgres, the pool and ioredis when the server went away mid-use. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Connection is closed/i,
  /Reached the max retries per request limit/i,
  /^Command timed out$/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/**
 * Whether an error says that PostgreSQL, Redis or the store could not be reached, rather than that the
 * job's work failed. Such an error says nothing about the job: it must not use up its attempts (S9's
 * three are for the job's own faults), or a few seconds of outage would dead-letter a whole backlog.
 * TypeORM wraps the driver's error (`driverError`); AggregateError (a failed connect to every address
 * of a host) carries the causes.
 */
export function isInfrastructureError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || isUnavailableSqlState(e.code))) return true;
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(e.message as string))) return true;
  if (isInfrastructureError(e.driverError, depth + 1) || isInfrastructureError(e.cause, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.some((inner) => isInfrastructureError(inner, depth + 1));
}

/**
 * A disk the service writes to is full: the file system (ENOSPC) or the user's quota on it (EDQUOT), or
 * PostgreSQL's own (SQLSTATE 53100 disk_full, on the driver's error).
 */
const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', '53100']);
/** A disk the service writes to takes no writes: mounted read-only, or the folder's permissions changed. */
const DISK_UNWRITABLE_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);

/** `full`: no space left; `unwritable`: read-only or not permitted. */
export type DiskFault = 'full' | 'unwritable';

/**
 * Whether an error says that the disk the service stores files on (the local store, the upload spool,
 * the temporary folder of a worker) is full or unwritable. Like an unreachable database this says
 * nothing about the request or the job, which succeed once space returns or the disk is writable again:
 * a request is answered 507 or 503 with Retry-After, a job waits without using an attempt. Only errors of
 * file calls count (they carry a `syscall`, which a worker's error keeps when it is handed over): an
 * EPERM from anything else is not the disk's.
 */
export function diskFault(err: unknown, depth = 0): DiskFault | null {
  if (!err || typeof err !== 'object' || depth > 4) return null;
  const e = err as { code?: unknown; syscall?: unknown; cause?: unknown; driverError?: unknown };
  if (typeof e.code === 'string') {
    if (DISK_FULL_CODES.has(e.code)) return 'full';
    if (DISK_UNWRITABLE_CODES.has(e.code) && typeof e.syscall === 'string') return 'unwritable';
  }
  return diskFault(e.cause, depth + 1) ?? diskFault(e.driverError, depth + 1);
}
