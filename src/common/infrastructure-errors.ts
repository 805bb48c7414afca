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
