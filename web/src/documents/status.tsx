import { useQueryClient, type Query } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ApiProblem, type Schemas } from '../api/client.js';
import { formatDateTime } from '../format.js';

type Status = Schemas['DocumentListItemDto']['status'];

const LABELS: Record<Status, string> = { pending: 'Checking', valid: 'Valid', invalid: 'Not valid', signed: 'Signed' };

export function StatusBadge({ status }: { status: Status }) {
  return (
    <span className={`badge badge-${status}`} data-testid="status" data-status={status}>
      {LABELS[status]}
    </span>
  );
}

/** A refusal that says to come back later: too many requests (429) or the service briefly down (503). */
function waitOf(error: unknown): ApiProblem | null {
  return error instanceof ApiProblem && (error.status === 429 || error.status === 503) ? error : null;
}

/** Seconds left until `until` (ms since the epoch), counted down once a second; 0 once it has passed. */
function useSecondsLeft(until: number | null): number {
  const left = () => (until === null ? 0 : Math.max(0, Math.ceil((until - Date.now()) / 1000)));
  const [seconds, setSeconds] = useState(left);
  useEffect(() => {
    setSeconds(left());
    if (until === null) return;
    const timer = setInterval(() => {
      const now = left();
      setSeconds(now);
      if (now === 0) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [until]);
  return seconds;
}

/** "in 30 seconds", "in 3 minutes", or a date and time for a long wait (a quota that renews next period). */
export function formatWait(seconds: number, until: number): string {
  if (seconds <= 0) return 'now';
  if (seconds < 120) return `in ${seconds} second${seconds === 1 ? '' : 's'}`;
  if (seconds < 3600) return `in ${Math.ceil(seconds / 60)} minutes`;
  return `after ${formatDateTime(new Date(until).toISOString())}`;
}

const ids = new WeakMap<ApiProblem, number>();
let nextId = 1;

/** One key per refusal: a new refusal starts its own wait. */
function keyOf(problem: ApiProblem): number {
  let id = ids.get(problem);
  if (id === undefined) ids.set(problem, (id = nextId++));
  return id;
}

/** What the service asked for, said once: why the request was refused and when to try again. */
function WaitNotice({ problem, onRetry, form }: { problem: ApiProblem; onRetry?: () => void; form?: boolean }) {
  // The wait is counted from when the refusal arrived, which is when this notice first shows it.
  const [until] = useState(() =>
    problem.retryAfterSeconds !== null ? Date.now() + problem.retryAfterSeconds * 1000 : null,
  );
  const seconds = useSecondsLeft(until);
  const quota = problem.code === 'QUOTA_EXCEEDED';
  const why =
    problem.status === 503
      ? 'The service is briefly unavailable.'
      : quota
        ? problem.message
        : 'Too many requests in a short time: the service asked to wait.';
  const when =
    until === null
      ? 'Try again in a moment.'
      : seconds > 0
        ? `You can try again ${formatWait(seconds, until)}.`
        : 'You can try again now.';
  return (
    <div className="notice warning wait-notice" role="alert" data-testid="wait-notice" data-status={problem.status}>
      <p>
        {why} {!quota || until !== null ? when : ''}
        {form ? ' What you entered is kept.' : ''}
      </p>
      {onRetry && (
        <button type="button" className="secondary" onClick={onRetry} disabled={seconds > 0}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A refused request as a sentence; a 429 or 503 with the wait the service asked for and, when given, a
 * retry. `kept`: the notice is a form's, whose text stays for the retry.
 */
export function ProblemNotice({ error, onRetry, kept }: { error: unknown; onRetry?: () => void; kept?: boolean }) {
  if (!error) return null;
  const wait = waitOf(error);
  if (wait) return <WaitNotice key={keyOf(wait)} problem={wait} onRetry={onRetry} form={kept} />;
  return (
    <p className="notice error" role="alert">
      {(error as Error).message}
    </p>
  );
}

/** The first query of the page that the service told to wait and that is being asked again after the wait. */
function waitingQuery(queries: Query[]): ApiProblem | null {
  for (const query of queries) {
    const reason = waitOf(query.state.fetchFailureReason);
    if (reason && query.state.fetchStatus === 'fetching') return reason;
  }
  return null;
}

/**
 * For every page: while a page's data is refused with 429 or 503 and asked for again after the service's
 * Retry-After, the page says so (instead of "Loading…" that lasts), with the wait counted down.
 */
export function ServiceWaitBanner() {
  const cache = useQueryClient().getQueryCache();
  const [problem, setProblem] = useState<ApiProblem | null>(() => waitingQuery(cache.getAll()));
  useEffect(() => cache.subscribe(() => setProblem(waitingQuery(cache.getAll()))), [cache]);
  if (!problem) return null;
  return <WaitNotice key={keyOf(problem)} problem={problem} />;
}
