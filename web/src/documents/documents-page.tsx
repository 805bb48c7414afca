import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useSearchParams } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { formatDay, humanKey } from '../format.js';
import { ProblemNotice, StatusBadge } from './status.js';
import { documentName, formatTotal } from './summary.js';
import { UploadPanel } from './upload-panel.js';
import { useLiveStatus } from '../use-live.js';
import './documents.css';

type Status = Schemas['DocumentListItemDto']['status'];
type Sort = 'relevance' | 'uploaded' | 'issue_date' | 'due_date' | 'amount';

/** Every filter, by the name it has in the page address (and, but for a few, in the API). */
const KEYS = [
  'q',
  'counterparty',
  'amount_min',
  'amount_max',
  'currency',
  'issued_from',
  'issued_to',
  'due_from',
  'due_to',
  'references',
  'status',
  'type',
  'uploaded_from',
  'uploaded_to',
  'sort',
] as const;
type Filters = Record<(typeof KEYS)[number], string>;

const EMPTY = Object.fromEntries(KEYS.map((k) => [k, ''])) as Filters;
const PAGE_SIZE = 20;
const STATUSES: Status[] = ['pending', 'valid', 'invalid', 'signed'];
const DEBOUNCE_MS = 300;

/** The orders offered, as `sort` or `sort:order` in the address. */
const SORTS: { value: string; label: string }[] = [
  { value: '', label: 'Best match first' },
  { value: 'uploaded', label: 'Uploaded, newest first' },
  { value: 'issue_date', label: 'Issued, newest first' },
  { value: 'issue_date:asc', label: 'Issued, oldest first' },
  { value: 'due_date:asc', label: 'Due, soonest first' },
  { value: 'due_date', label: 'Due, latest first' },
  { value: 'amount', label: 'Amount, highest first' },
  { value: 'amount:asc', label: 'Amount, lowest first' },
];

const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'JPY', 'CNY', 'CAD', 'AUD'];
const AMOUNT = /^\d{1,15}([.,]\d{1,4})?$/;

function read(params: URLSearchParams): Filters {
  const filters = { ...EMPTY };
  for (const key of KEYS) filters[key] = params.get(key) ?? '';
  return filters;
}

function write(filters: Filters): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of KEYS) if (filters[key].trim()) params.set(key, filters[key].trim());
  return params;
}

/** The day after `date` (YYYY-MM-DD): "until" includes the whole day. */
function dayAfter(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/** Why the amount range is not applied yet, if it is not. */
function amountProblem(f: Filters): string | null {
  const bad = [f.amount_min, f.amount_max].some((v) => v.trim() && !AMOUNT.test(v.trim()));
  if (bad) return 'Enter an amount as digits, such as 1000 or 1000.50.';
  if ((f.amount_min.trim() || f.amount_max.trim()) && !f.currency) return 'Choose a currency to filter by amount.';
  return null;
}

const amount = (v: string) => v.trim().replace(',', '.') || undefined;

/** The list's query to the API; an amount range is left out until it can be asked. */
function toQuery(f: Filters, cursor: string | undefined) {
  // An order the page does not offer (a hand-edited address) is the default one.
  const known = SORTS.some((s) => s.value === f.sort) ? f.sort : '';
  const [sort, order] = known.split(':') as [Sort | '', 'asc' | undefined];
  const amounts = amountProblem(f) === null;
  return {
    limit: PAGE_SIZE,
    cursor,
    q: f.q.trim() || undefined,
    counterparty: f.counterparty.trim() || undefined,
    amount_min: amounts ? amount(f.amount_min) : undefined,
    amount_max: amounts ? amount(f.amount_max) : undefined,
    currency: f.currency || undefined,
    issued_from: f.issued_from || undefined,
    issued_to: f.issued_to || undefined,
    due_from: f.due_from || undefined,
    due_to: f.due_to || undefined,
    references: f.references.trim() || undefined,
    status: STATUSES.find((s) => s === f.status),
    document_type: f.type.trim() || undefined,
    created_from: f.uploaded_from ? `${f.uploaded_from}T00:00:00Z` : undefined,
    created_before: f.uploaded_to ? dayAfter(f.uploaded_to) : undefined,
    sort: sort || undefined,
    order: sort ? (order ?? ('desc' as const)) : undefined,
  };
}

/**
 * The filters as typed and as in the page address: what is typed reaches the address after a pause
 * (so a search can be shared, bookmarked, reloaded and gone back to), and an address reached another
 * way (back, a link) fills the form.
 */
function useAddressFilters(): [Filters, Filters, (next: Filters) => void] {
  const [params, setParams] = useSearchParams();
  const applied = useMemo(() => read(params), [params]);
  const appliedKey = write(applied).toString();
  const [draft, setDraft] = useState<Filters>(applied);
  const written = useRef(appliedKey);

  useEffect(() => {
    // Our own write coming back: what is typed meanwhile stays.
    if (appliedKey === written.current) return;
    written.current = appliedKey;
    setDraft(read(new URLSearchParams(appliedKey)));
  }, [appliedKey]);

  const draftKey = write(draft).toString();
  useEffect(() => {
    if (draftKey === written.current) return;
    const timer = setTimeout(() => {
      written.current = draftKey;
      setParams(new URLSearchParams(draftKey), { replace: true });
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draftKey, setParams]);

  return [read(new URLSearchParams(appliedKey)), draft, setDraft];
}

export function DocumentsPage() {
  const [filters, draft, setDraft] = useAddressFilters();
  const filtersKey = write(filters).toString();
  // Cursors of the pages before the current one, so "Previous" can go back; a new search starts again.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  useEffect(() => setCursors([undefined]), [filtersKey]);
  const cursor = cursors[cursors.length - 1];

  // The badges follow the event stream: a document's event refreshes the list.
  useLiveStatus();
  const { data, error, isPending, isFetching } = useQuery({
    queryKey: ['documents', filtersKey, cursor],
    placeholderData: keepPreviousData,
    queryFn: () => unwrap(api.GET('/sdf', { params: { query: toQuery(filters, cursor) } })),
  });

  const set = (key: keyof Filters) => (value: string) => setDraft({ ...draft, [key]: value });
  const filtered = filtersKey !== '';
  const more = KEYS.filter((k) => k !== 'q' && k !== 'sort').some((k) => filters[k]);
  const problem = amountProblem(draft);
  // Open when filters are in use (a shared address, a reference followed), and as the person leaves it.
  const [showFilters, setShowFilters] = useState(more);
  useEffect(() => {
    if (more) setShowFilters(true);
  }, [more]);
  const documents = data?.documents ?? [];
  const clear = () => setDraft(EMPTY);

  return (
    <section>
      <div className="page-head">
        <h1 tabIndex={-1}>Documents</h1>
      </div>
      <UploadPanel />
      <form className="doc-search" role="search" aria-label="Find documents" onSubmit={(e) => e.preventDefault()}>
        <div className="field doc-search-box">
          <label htmlFor="search-q">Search documents</label>
          <input
            id="search-q"
            type="search"
            value={draft.q}
            maxLength={200}
            autoComplete="off"
            aria-describedby="search-q-hint"
            onChange={(e) => set('q')(e.target.value)}
          />
          <p className="hint" id="search-q-hint">
            A number or part of one (INV-2026-00142, 00142), or a company name.
          </p>
        </div>
        <div className="field">
          <label htmlFor="search-sort">Order</label>
          <select id="search-sort" value={draft.sort} onChange={(e) => set('sort')(e.target.value)}>
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {/* Without words to match, the default order is the newest upload first. */}
                {s.value === '' && !draft.q.trim() ? 'Newest upload first' : s.label}
              </option>
            ))}
          </select>
        </div>
        <details className="doc-filters" open={showFilters} onToggle={(e) => setShowFilters(e.currentTarget.open)}>
          <summary>Filters{more ? ' (in use)' : ''}</summary>
          <div className="filters">
            <fieldset className="filter-row">
              <legend className="visually-hidden">Parties and status</legend>
              <TextFilter
                id="filter-counterparty"
                label="Counterparty"
                value={draft.counterparty}
                set={set('counterparty')}
              />
              <TextFilter
                id="filter-references"
                label="Refers to"
                value={draft.references}
                set={set('references')}
                placeholder="PO-2026-0815"
              />
              <div className="field">
                <label htmlFor="filter-status">Status</label>
                <select id="filter-status" value={draft.status} onChange={(e) => set('status')(e.target.value)}>
                  <option value="">Any</option>
                  <option value="pending">Checking</option>
                  <option value="valid">Valid</option>
                  <option value="invalid">Not valid</option>
                  <option value="signed">Signed</option>
                </select>
              </div>
              <TextFilter id="filter-type" label="Type" value={draft.type} set={set('type')} placeholder="invoice" />
            </fieldset>
            <fieldset className="filter-row">
              <legend className="visually-hidden">Amount</legend>
              <TextFilter
                id="filter-amount-min"
                label="Amount at least"
                value={draft.amount_min}
                set={set('amount_min')}
                numeric
                invalid={problem !== null}
              />
              <TextFilter
                id="filter-amount-max"
                label="Amount at most"
                value={draft.amount_max}
                set={set('amount_max')}
                numeric
                invalid={problem !== null}
              />
              <div className="field">
                <label htmlFor="filter-currency">Currency</label>
                <select
                  id="filter-currency"
                  value={draft.currency}
                  onChange={(e) => set('currency')(e.target.value)}
                  aria-describedby={problem ? 'amount-problem' : undefined}
                >
                  <option value="">Any</option>
                  {[...new Set([...CURRENCIES, ...(draft.currency ? [draft.currency] : [])])].map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              </div>
              {problem && (
                <p className="field-error" id="amount-problem" role="alert">
                  {problem}
                </p>
              )}
            </fieldset>
            <fieldset className="filter-row">
              <legend className="visually-hidden">Dates</legend>
              <DateField
                id="filter-issued-from"
                label="Issued from"
                value={draft.issued_from}
                set={set('issued_from')}
              />
              <DateField id="filter-issued-to" label="Issued until" value={draft.issued_to} set={set('issued_to')} />
              <DateField id="filter-due-from" label="Due from" value={draft.due_from} set={set('due_from')} />
              <DateField id="filter-due-to" label="Due until" value={draft.due_to} set={set('due_to')} />
              <DateField
                id="filter-uploaded-from"
                label="Uploaded from"
                value={draft.uploaded_from}
                set={set('uploaded_from')}
              />
              <DateField
                id="filter-uploaded-to"
                label="Uploaded until"
                value={draft.uploaded_to}
                set={set('uploaded_to')}
              />
            </fieldset>
          </div>
        </details>
        {filtered && (
          <button type="button" className="secondary" onClick={clear}>
            Clear search and filters
          </button>
        )}
      </form>
      <ProblemNotice error={error} />
      {isPending ? (
        <p role="status">Loading documents…</p>
      ) : error && !data ? null : documents.length === 0 ? (
        <div className="empty" data-testid="empty" role="status">
          {filtered ? (
            <>
              <p>
                {filters.q.trim()
                  ? `No documents match “${filters.q.trim()}”${more ? ' with these filters' : ''}.`
                  : 'No documents match these filters.'}
              </p>
              <button type="button" className="secondary" onClick={clear}>
                Show all documents
              </button>
            </>
          ) : (
            <p>
              No documents yet. Upload an <code>.sdf</code> file above, or <Link href="/read">read a file</Link> without
              storing it.
            </p>
          )}
        </div>
      ) : (
        <table className="list-table doc-table" aria-busy={isFetching}>
          <caption className="visually-hidden">
            {filtered ? 'Documents matching the search' : 'Your documents, newest upload first'}
          </caption>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Counterparty</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col">Issued</th>
              <th scope="col">Due</th>
              <th scope="col">Status</th>
              <th scope="col">Type</th>
            </tr>
          </thead>
          <tbody>
            {documents.map((doc) => (
              <tr key={doc.id} data-testid="document-row" data-id={doc.id}>
                <td className="doc-number">
                  <Link href={`/documents/${doc.id}`}>{documentName(doc)}</Link>
                </td>
                <td data-label="Counterparty">{doc.summary?.counterparty ?? '—'}</td>
                <td data-label="Amount" className="num">
                  {formatTotal(doc.summary)}
                </td>
                <td data-label="Issued">{formatDay(doc.summary?.issue_date)}</td>
                <td data-label="Due">{formatDay(doc.summary?.due_date)}</td>
                <td data-label="Status">
                  <StatusBadge status={doc.status} />
                </td>
                <td data-label="Type">{doc.document_type ? humanKey(doc.document_type) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
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

function TextFilter(props: {
  id: string;
  label: string;
  value: string;
  set: (value: string) => void;
  placeholder?: string;
  numeric?: boolean;
  invalid?: boolean;
}) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        value={props.value}
        placeholder={props.placeholder}
        maxLength={props.numeric ? 20 : 200}
        inputMode={props.numeric ? 'decimal' : undefined}
        autoComplete="off"
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.invalid ? 'amount-problem' : undefined}
        onChange={(e) => props.set(e.target.value)}
      />
    </div>
  );
}

function DateField(props: { id: string; label: string; value: string; set: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input id={props.id} type="date" value={props.value} onChange={(e) => props.set(e.target.value)} />
    </div>
  );
}
