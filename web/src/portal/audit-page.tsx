import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { download } from '../download.js';
import { formatDateTime } from '../format.js';

interface Filters {
  action: string;
  actor: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { action: '', actor: '', from: '', to: '' };
const PAGE_SIZE = 50;
/** A CSV download walks the pages of the filter; this many rows at most. */
const CSV_MAX_ROWS = 10_000;

function query(filters: Filters, cursor?: string) {
  return {
    limit: PAGE_SIZE,
    cursor,
    action: filters.action.trim() || undefined,
    actor: filters.actor.trim() || undefined,
    from: filters.from ? `${filters.from}T00:00:00Z` : undefined,
    to: filters.to ? `${filters.to}T23:59:59.999Z` : undefined,
  };
}

const csvCell = (value: unknown): string => {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  // A leading = + - @ would be a formula to a spreadsheet: quoted with a leading apostrophe.
  const safe = /^[=+\-@]/.test(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
};

type Entry = Schemas['AuditEntryDto'];

/** What an entry concerns, in words: the document's title; a deleted one says so. */
function documentText(entry: Entry): string | null {
  const doc = entry.document;
  if (!doc) return null;
  if (doc.deleted) return doc.title ? `${doc.title} (deleted)` : 'Deleted document';
  return doc.title ?? 'Document without a title';
}

/** The human columns first, then the ids the service keeps. */
function toCsv(rows: Entry[]): string {
  const header = [
    'created_at',
    'action_label',
    'actor_name',
    'actor_email',
    'actor_key_prefix',
    'document_title',
    'action',
    'actor',
    'resource_id',
    'ip_address',
    'metadata',
  ];
  const lines = rows.map((r) =>
    [
      r.created_at,
      r.action_label,
      r.actor_display.name,
      r.actor_display.email,
      r.actor_display.key_prefix,
      documentText(r),
      r.action,
      r.actor,
      r.resource_id,
      r.ip_address,
      r.metadata,
    ]
      .map(csvCell)
      .join(','),
  );
  return `${header.join(',')}\r\n${lines.join('\r\n')}\r\n`;
}

function Actor({ actor }: { actor: Entry['actor_display'] }) {
  const detail =
    actor.kind === 'api_key' && actor.key_prefix
      ? `API key ${actor.key_prefix}`
      : actor.email && actor.email !== actor.name
        ? actor.email
        : null;
  return (
    <>
      <span data-testid="audit-actor">{actor.name}</span>
      {detail && <span className="audit-detail muted">{detail}</span>}
    </>
  );
}

function Concerns({ entry }: { entry: Entry }) {
  const text = documentText(entry);
  if (!entry.document || !text) {
    // Something other than a document: its id, unless it is the actor themself (a sign-in, a profile change).
    const self = entry.resource_id !== null && entry.actor === `user:${entry.resource_id}`;
    return <>{entry.resource_id && !self ? <code className="muted">{entry.resource_id}</code> : '—'}</>;
  }
  if (entry.document.deleted) return <span className="muted">{text}</span>;
  return <Link href={`/documents/${entry.document.id}`}>{text}</Link>;
}

/** The organisation's audit log: the filters of GET /v1/audit, paging, and a CSV of the filtered rows. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];
  const actions = useQuery({
    queryKey: ['audit-actions'],
    staleTime: Infinity,
    queryFn: () => unwrap(api.GET('/v1/audit/actions')),
  });
  const page = useQuery({
    queryKey: ['audit', filters, cursor],
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.GET('/v1/audit', { params: { query: query(filters, cursor) } })),
  });

  const exportCsv = async () => {
    setExporting(true);
    setExportError(null);
    try {
      const rows: Entry[] = [];
      let next: string | undefined;
      do {
        const answer = await unwrap(api.GET('/v1/audit', { params: { query: query(filters, next) } }));
        rows.push(...(answer?.entries ?? []));
        next = answer?.has_more ? (answer.next_cursor ?? undefined) : undefined;
      } while (next && rows.length < CSV_MAX_ROWS);
      download(new TextEncoder().encode(toCsv(rows)), 'audit-log.csv', 'text/csv');
    } catch (e) {
      setExportError(e);
    } finally {
      setExporting(false);
    }
  };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters(draft);
    setCursors([undefined]);
  };
  const entries = page.data?.entries ?? [];
  return (
    <section>
      <h1 tabIndex={-1}>Audit log</h1>
      <form className="filters" onSubmit={apply} aria-label="Filter the audit log">
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <select
            id="audit-action"
            value={draft.action}
            onChange={(e) => {
              // A choice of action applies at once; the other fields wait for Apply.
              const next = { ...draft, action: e.target.value };
              setDraft(next);
              setFilters({ ...filters, action: next.action });
              setCursors([undefined]);
            }}
          >
            <option value="">Any action</option>
            {(actions.data?.actions ?? []).map((a) => (
              <option key={a.action} value={a.action}>
                {a.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <input
            id="audit-actor"
            value={draft.actor}
            placeholder="User id or key prefix"
            onChange={(e) => setDraft({ ...draft, actor: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="audit-from">From</label>
          <input
            id="audit-from"
            type="date"
            value={draft.from}
            onChange={(e) => setDraft({ ...draft, from: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="audit-to">Until</label>
          <input
            id="audit-to"
            type="date"
            value={draft.to}
            onChange={(e) => setDraft({ ...draft, to: e.target.value })}
          />
        </div>
        <button type="submit">Apply filters</button>
        <button type="button" className="secondary" onClick={() => void exportCsv()} disabled={exporting}>
          {exporting ? 'Preparing…' : 'Download CSV'}
        </button>
      </form>
      <ProblemNotice error={page.error ?? exportError} />
      {page.isPending ? (
        <p role="status">Loading…</p>
      ) : entries.length === 0 ? (
        <div className="empty">
          <p>No entries match.</p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="audit-table">
            <caption className="visually-hidden">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col" className="hide-narrow">
                  Concerns
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.id} data-testid="audit-row" data-action={entry.action}>
                  <td>{formatDateTime(entry.created_at)}</td>
                  <td className="wrap">
                    {entry.action_label}
                    {/* Narrow screens have no Concerns column: the document is named under its action. */}
                    {entry.document && (
                      <span className="audit-detail show-narrow">
                        <Concerns entry={entry} />
                      </span>
                    )}
                  </td>
                  <td className="wrap">
                    <Actor actor={entry.actor_display} />
                  </td>
                  <td className="wrap hide-narrow">
                    <Concerns entry={entry} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(cursors.length > 1 || page.data?.has_more) && (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="secondary"
            disabled={cursors.length <= 1}
            onClick={() => setCursors(cursors.slice(0, -1))}
          >
            Newer
          </button>
          <button
            type="button"
            className="secondary"
            disabled={!page.data?.has_more}
            onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
          >
            Older
          </button>
        </nav>
      )}
    </section>
  );
}
