import { AppError } from '../common/errors.js';

/** M3: 429 QUOTA_EXCEEDED, Retry-After in seconds to the end of the billing period. */
export function quotaExceeded(quota: string, retryAfterSeconds: number): AppError {
  const base = AppError.of('QUOTA_EXCEEDED', `The plan's ${quota} quota for this billing period is used up`);
  return new AppError(
    base.status,
    base.code,
    base.message,
    [{ path: `/quota/${quota}`, message: 'quota exceeded until the period ends' }],
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
