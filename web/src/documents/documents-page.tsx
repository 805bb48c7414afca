import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { formatBytes, formatDateTime, humanKey } from '../format.js';
import { ProblemNotice, StatusBadge } from './status.js';
import { UploadPanel } from './upload-panel.js';

type Status = Schemas['DocumentListItemDto']['status'];

interface Filters {
  status: Status | '';
  type: string;
  from: string;
  to: string;
}

const EMPTY: Filters = { status: '', type: '', from: '', to: '' };
const PAGE_SIZE = 20;

/** The day after `date` (YYYY-MM-DD): "to" includes the whole day. */
function dayAfter(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

export function DocumentsPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // Cursors of the pages before the current one, so "Previous" can go back.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];

  const { data, error, isPending, isFetching } = useQuery({
    queryKey: ['documents', filters, cursor],
    placeholderData: keepPreviousData,
    queryFn: () =>
      unwrap(
        api.GET('/sdf', {
          params: {
            query: {
              limit: PAGE_SIZE,
              cursor,
              status: filters.status || undefined,
              document_type: filters.type.trim() || undefined,
              created_from: filters.from ? `${filters.from}T00:00:00Z` : undefined,
              created_before: filters.to ? dayAfter(filters.to) : undefined,
            },
          },
        }),
      ),
  });

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters(draft);
    setCursors([undefined]);
  };
  const filtered = filters.status || filters.type || filters.from || filters.to;
  const documents = data?.documents ?? [];

  return (
    <section>
      <div className="page-head">
        <h1 tabIndex={-1}>Documents</h1>
      </div>
      <UploadPanel />
      <form className="filters" onSubmit={apply} aria-label="Filter documents">
        <div className="field">
          <label htmlFor="filter-status">Status</label>
          <select
            id="filter-status"
            value={draft.status}
            onChange={(e) => setDraft({ ...draft, status: e.target.value as Status | '' })}
          >
            <option value="">Any</option>
            <option value="pending">Checking</option>
            <option value="valid">Valid</option>
            <option value="invalid">Not valid</option>
            <option value="signed">Signed</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-type">Type</label>
          <input
            id="filter-type"
            value={draft.type}
            placeholder="invoice"
            onChange={(e) => setDraft({ ...draft, type: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="filter-from">Uploaded from</label>
          <input
            id="filter-from"
            type="date"
            value={draft.from}
            onChange={(e) => setDraft({ ...draft, from: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="filter-to">Uploaded until</label>
          <input
            id="filter-to"
            type="date"
            value={draft.to}
            onChange={(e) => setDraft({ ...draft, to: e.target.value })}
          />
        </div>
        <button type="submit">Apply filters</button>
        {filtered && (
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
              setCursors([undefined]);
            }}
          >
            Clear
          </button>
        )}
      </form>
      <ProblemNotice error={error} />
      {isPending ? (
        <p role="status">Loading documents…</p>
      ) : error && !data ? null : documents.length === 0 ? (
        <div className="empty" data-testid="empty">
          {filtered ? (
            <p>No document matches these filters.</p>
          ) : (
            <p>
              No documents yet. Upload an <code>.sdf</code> file above, or <Link href="/read">read a file</Link> without
              storing it.
            </p>
          )}
        </div>
      ) : (
        <div className="table-scroll">
          <table className="list-table" aria-busy={isFetching}>
            <caption className="visually-hidden">Your documents, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Document</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col" className="hide-narrow">
                  Uploaded
                </th>
                <th scope="col" className="num hide-narrow">
                  Size
                </th>
              </tr>
            </thead>
            <tbody>
              {documents.map((doc) => (
                <tr key={doc.id} data-testid="document-row" data-id={doc.id}>
                  <td>
                    <Link href={`/documents/${doc.id}`}>
                      <code>{doc.document_id.slice(0, 8)}</code>
                      <span className="visually-hidden"> {doc.document_type ?? 'document'}</span>
                    </Link>
                  </td>
                  <td>{doc.document_type ? humanKey(doc.document_type) : '—'}</td>
                  <td>
                    <StatusBadge status={doc.status} />
                  </td>
                  <td className="hide-narrow">{formatDateTime(doc.created_at)}</td>
                  <td className="num hide-narrow">{formatBytes(doc.file_size_bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(cursors.length > 1 || data?.has_more) && (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="secondary"
            disabled={cursors.length <= 1}
            onClick={() => setCursors(cursors.slice(0, -1))}
          >
            Previous page
          </button>
          <button
            type="button"
            className="secondary"
            disabled={!data?.has_more}
            onClick={() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}
          >
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}
