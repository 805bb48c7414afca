import type { Schemas } from '../api/client.js';

type Status = Schemas['DocumentListItemDto']['status'];

const LABELS: Record<Status, string> = { pending: 'Checking', valid: 'Valid', invalid: 'Not valid', signed: 'Signed' };

export function StatusBadge({ status }: { status: Status }) {
  return (
    <span className={`badge badge-${status}`} data-testid="status" data-status={status}>
      {LABELS[status]}
    </span>
  );
}

export function ProblemNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="notice error" role="alert">
      {(error as Error).message}
    </p>
  );
}
