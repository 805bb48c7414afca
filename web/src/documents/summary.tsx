import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, unwrap, type Schemas } from '../api/client.js';
import { formatAmount, formatDateTime, humanKey } from '../format.js';

export type Summary = Schemas['DocumentSummaryDto'];

/** The gross total by its currency ("€1,713.60"), or a dash. */
export function formatTotal(summary: Summary | null | undefined): string {
  if (!summary?.amount) return '—';
  const value = Number(summary.amount);
  return Number.isFinite(value) ? formatAmount(value, summary.currency) : summary.amount;
}

/** What a document is called where there is no business number yet (still being checked, or unreadable). */
export function documentName(doc: {
  document_type: string | null;
  created_at: string;
  summary: Summary | null;
}): string {
  if (doc.summary?.number) return doc.summary.number;
  const type = doc.document_type ? humanKey(doc.document_type) : 'Document';
  return `${type} uploaded ${formatDateTime(doc.created_at)}`;
}

/** The page heading: "Invoice INV-2026-00142 · Acme Supplies GmbH". */
export function documentTitle(doc: { document_type: string | null; summary: Summary | null }): string {
  const title = doc.summary?.title ?? (doc.document_type ? humanKey(doc.document_type) : 'Document');
  const party = doc.summary?.issuer ?? doc.summary?.counterparty;
  return party ? `${title} · ${party}` : title;
}

/**
 * Text in which business numbers ("INV-2026-00142") are not broken at their hyphens when the line wraps:
 * each word holding a hyphen, up to a phone's width of them, is kept on one line.
 */
export function WholeNumbers({ text }: { text: string }) {
  return (
    <>
      {text.split(/(\s+)/).map((part, index) =>
        part.includes('-') && part.length <= UNBROKEN_MAX ? (
          <span key={index} className="unbroken">
            {part}
          </span>
        ) : (
          part
        ),
      )}
    </>
  );
}

/** Longer words than this may still break: on a 375 px phone they would run out of the page otherwise. */
const UNBROKEN_MAX = 20;

/** How the other party and the due date are called for the types people know. */
const WORDS: Record<string, { counterparty: string; due: string }> = {
  invoice: { counterparty: 'Customer', due: 'Due' },
  purchase_order: { counterparty: 'Supplier', due: 'Delivery' },
  nomination: { counterparty: 'Counterparty', due: 'Scheduled for' },
};

export function wordsFor(documentType: string | null): { counterparty: string; due: string } {
  const key = (documentType ?? '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  return WORDS[key] ?? { counterparty: 'Counterparty', due: 'Due' };
}

/** The list's address for documents matching a business number. */
export function searchHref(text: string): string {
  return `/documents?${new URLSearchParams({ q: text }).toString()}`;
}

/**
 * A business number this document names, linked to the document that carries it: that document's
 * page when exactly one other document has the number, the list searched for it otherwise.
 */
export function ReferenceLink({ reference, self }: { reference: string; self: string }) {
  const found = useQuery({
    queryKey: ['reference', reference],
    queryFn: () => unwrap(api.GET('/sdf', { params: { query: { q: reference, limit: 5 } } })),
    staleTime: 30_000,
  });
  const exact = (found.data?.documents ?? []).filter((d) => d.id !== self && d.summary?.number === reference);
  const one = exact.length === 1 ? exact[0]! : null;
  return (
    <Link href={one ? `/documents/${one.id}` : searchHref(reference)} data-testid="reference-link">
      <WholeNumbers text={one?.summary ? one.summary.title : reference} />
    </Link>
  );
}

/** The documents that name this one's number among their references (an order's invoices). */
export function NamedBy({ number, self }: { number: string; self: string }) {
  const found = useQuery({
    queryKey: ['named-by', number],
    queryFn: () => unwrap(api.GET('/sdf', { params: { query: { references: number, limit: 10 } } })),
    staleTime: 30_000,
  });
  const documents = (found.data?.documents ?? []).filter((d) => d.id !== self);
  if (documents.length === 0) return null;
  return (
    <div>
      <dt>Named by</dt>
      <dd>
        <ul className="plain-list">
          {documents.map((d) => (
            <li key={d.id}>
              <Link href={`/documents/${d.id}`}>{d.summary?.title ?? documentName(d)}</Link>
            </li>
          ))}
        </ul>
        {found.data?.has_more && (
          <Link href={`/documents?${new URLSearchParams({ references: number }).toString()}`}>
            Every document naming {number}
          </Link>
        )}
      </dd>
    </div>
  );
}
