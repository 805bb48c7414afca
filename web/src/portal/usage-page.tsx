import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatBytes, formatDateTime } from '../format.js';
import { planName } from './plan-name.js';

function Meter({
  label,
  used,
  limit,
  format,
}: {
  label: string;
  used: number;
  limit: number | null;
  format: (n: number) => string;
}) {
  const share = limit ? Math.min(1, used / limit) : 0;
  return (
    <div className="meter" data-testid="meter" data-label={label}>
      <div className="meter-head">
        <span className="meter-label">{label}</span>
        <span>
          {format(used)} {limit === null ? '(no limit)' : `of ${format(limit)}`}
        </span>
      </div>
      {limit !== null && (
        <progress
          max={limit}
          value={Math.min(used, limit)}
          aria-label={`${label}: ${Math.round(share * 100)} % used`}
        />
      )}
    </div>
  );
}

const count = (n: number) => new Intl.NumberFormat().format(n);

/** This period's usage against the plan's limits, and what happens at a limit. */
export function UsagePage() {
  const usage = useQuery({ queryKey: ['usage'], queryFn: () => unwrap(api.GET('/v1/billing/usage')) });
  const plan = useQuery({ queryKey: ['plan'], queryFn: () => unwrap(api.GET('/v1/billing/plan')) });
  const u = usage.data;
  return (
    <section className="narrow">
      <h1 tabIndex={-1}>Usage</h1>
      <ProblemNotice error={usage.error ?? plan.error} />
      {plan.data && (
        <p className="lead" data-testid="plan-name">
          Plan: <strong>{planName(plan.data.plan)}</strong>, up to {count(plan.data.rpm)} requests a minute.
        </p>
      )}
      {u ? (
        <div className="panel-box">
          <p>
            This period: {formatDateTime(u.period.start)} to {formatDateTime(u.period.end)}.
          </p>
          <Meter label="Documents uploaded" used={u.documents_uploaded} limit={u.documents_limit} format={count} />
          <Meter label="API calls" used={u.api_calls} limit={u.api_calls_limit} format={count} />
          <Meter label="Storage" used={u.storage_bytes} limit={u.storage_limit_bytes} format={formatBytes} />
          <p className="hint">
            At a limit, uploads or calls are refused with a clear error (HTTP 429, QUOTA_EXCEEDED) until the next period
            or a larger plan; nothing stored is lost.
          </p>
        </div>
      ) : (
        !usage.error && <p role="status">Loading…</p>
      )}
    </section>
  );
}
