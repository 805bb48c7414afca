import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client.js';
import { formatDateTime } from '../format.js';
import { useLiveStatus } from '../use-live.js';
import { ProblemNotice } from './status.js';

const PUSH_STATUS: Record<string, string> = {
  queued: 'Waiting',
  running: 'Sending',
  succeeded: 'In the ERP',
  failed: 'Failed',
};

/** A document's way into the ERP: push it through a connector, and the history of its pushes. */
export function ErpPushes({ documentId, ready }: { documentId: string; ready: boolean }) {
  const queryClient = useQueryClient();
  const connectors = useQuery({ queryKey: ['connectors'], queryFn: () => unwrap(api.GET('/connectors')) });
  const active = (connectors.data?.connectors ?? []).filter((c) => c.is_active);
  const [chosen, setChosen] = useState<string>('');
  // A finished push arrives as an event on the stream (document.erp_pushed), which has the pushes read
  // again; only while the stream cannot open are they polled while one is under way.
  const live = useLiveStatus();
  const status = useQuery({
    queryKey: ['erp-status', documentId],
    enabled: active.length > 0,
    queryFn: () => unwrap(api.GET('/sdf/{id}/erp-status', { params: { path: { id: documentId } } })),
    refetchInterval: (query) =>
      live === 'down' && query.state.data?.pushes.some((p) => p.status === 'queued' || p.status === 'running')
        ? 1000
        : false,
  });
  const push = useMutation({
    mutationFn: (connectorId: string) =>
      unwrap(
        api.POST('/sdf/{id}/push-to-erp', {
          params: { path: { id: documentId } },
          body: { connector_id: connectorId },
        }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['erp-status', documentId] }),
  });
  if (active.length === 0) return null;
  const target = chosen || active[0].id;
  const pushes = status.data?.pushes ?? [];
  const nameOf = (id: string) => {
    const c = active.find((x) => x.id === id);
    return c ? (c.name ?? c.erp_type) : 'A removed connector';
  };
  return (
    <div className="panel-box" role="region" aria-labelledby="erp-heading">
      <h2 id="erp-heading">ERP</h2>
      <div className="inline-form">
        {active.length > 1 && (
          <div className="field">
            <label htmlFor="push-connector">Connector</label>
            <select id="push-connector" value={target} onChange={(e) => setChosen(e.target.value)}>
              {active.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name ?? c.erp_type}
                </option>
              ))}
            </select>
          </div>
        )}
        <button type="button" onClick={() => push.mutate(target)} disabled={!ready || push.isPending}>
          Push to {active.length === 1 ? nameOf(target) : 'the ERP'}
        </button>
      </div>
      {!ready && <p className="hint">A document is pushed once it is valid or signed.</p>}
      <ProblemNotice error={push.error ?? status.error} />
      {pushes.length > 0 && (
        <ul className="files" data-testid="erp-pushes">
          {pushes.map((p) => (
            <li key={p.push_id} data-testid="erp-push" data-status={p.status}>
              <strong>{PUSH_STATUS[p.status] ?? p.status}</strong>
              <span>{nameOf(p.connector_id)}</span>
              {p.erp_document_id && <span className="muted">ERP id {p.erp_document_id}</span>}
              {p.error && <span className="muted">{p.error}</span>}
              <span className="muted">{formatDateTime(p.updated_at)}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
