import { AppError } from '../common/errors.js';
import { readCursor } from '../common/cursor.js';
import type { DocumentSummary } from '../sdf/summary.js';
import type { DocumentStatus } from './entities/document.entity.js';

export const LIST_SORTS = ['relevance', 'uploaded', 'issue_date', 'due_date', 'amount'] as const;
export type ListSort = (typeof LIST_SORTS)[number];
export const LIST_ORDERS = ['asc', 'desc'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

/** At most this many words of `q` are matched (each must match); `q` itself is at most 200 characters. */
export const MAX_QUERY_WORDS = 20;

/** A keyset position of the search: the sort key of the last row (as text), its created_at and id. */
export interface SearchPosition {
  key: string | null;
  createdAt: Date;
  id: string;
}

export interface SearchFilter {
  limit: number;
  status?: DocumentStatus;
  documentType?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  q?: string;
  counterparty?: string;
  amountMin?: string;
  amountMax?: string;
  currency?: string;
  issuedFrom?: string;
  issuedTo?: string;
  dueFrom?: string;
  dueTo?: string;
  references?: string;
  sort: ListSort;
  order: ListOrder;
  after?: SearchPosition;
}

/** How many values summarySetSql stores (summaryParams gives them). */
export const SUMMARY_PARAM_COUNT = 10;

/**
 * The summary columns a write stores, from summaryParams' values: parameters numbered from `$first`, or
 * one SQL expression each (a statement storing many rows reads them from a record set), so every
 * statement that stores a summary stores the same thing. The values are derived in the process, not from
 * the summary's jsonb in SQL, where each column's expression would parse the parameter again. The
 * tsvector uses the `simple` configuration (numbers and names are not words of one language).
 */
export function summarySetSql(values: number | readonly string[]): string {
  const v =
    typeof values === 'number' ? Array.from({ length: SUMMARY_PARAM_COUNT }, (_, i) => `$${values + i}`) : values;
  if (v.length !== SUMMARY_PARAM_COUNT) throw new Error(`summarySetSql takes ${SUMMARY_PARAM_COUNT} values`);
  const [json, num, issuer, counterparty, amount, currency, issued, due, refs, text] = v;
  return `summary = ${json}::jsonb,
    summary_number = ${num}::text, summary_issuer = ${issuer}::text, summary_counterparty = ${counterparty}::text,
    summary_amount = ${amount}::numeric, summary_currency = ${currency}::text,
    summary_issue_date = ${issued}::date, summary_due_date = ${due}::date,
    summary_references = ${refs}::text[],
    summary_text = ${text}::text, summary_search = to_tsvector('simple', ${text}::text),
    summarized_at = now()`;
}

/**
 * summarySetSql's values for `summary` (null: a document whose data.json could not be read, which has
 * none). The searchable text is the number, the names and the references, lowercased as a query's words
 * are (queryWords), so a word matches the text it was typed from.
 */
export function summaryParams(summary: DocumentSummary | null | undefined): unknown[] {
  if (!summary) return [null, null, null, null, null, null, null, null, [], null];
  const words = [summary.number, summary.issuer, summary.counterparty, ...summary.references].filter(
    (w): w is string => typeof w === 'string',
  );
  return [
    JSON.stringify(summary),
    summary.number,
    summary.issuer,
    summary.counterparty,
    summary.amount,
    summary.currency,
    summary.issue_date,
    summary.due_date,
    summary.references,
    words.join(' ').toLowerCase(),
  ];
}

/** Control characters (NUL among them) are folded to spaces, as the summaries' own text is. */
export function normalizeQuery(q: string): string {
  // eslint-disable-next-line no-control-regex
  return q.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim();
}

/** The words of `q`, for matching each; a 400 naming `q` past MAX_QUERY_WORDS. */
export function queryWords(q: string): string[] {
  const words = [
    ...new Set(
      q
        .toLowerCase()
        .split(' ')
        .filter((w) => w !== ''),
    ),
  ];
  if (words.length > MAX_QUERY_WORDS) {
    throw AppError.badRequest('Invalid query parameters', [
      { path: '/q', message: `must hold at most ${MAX_QUERY_WORDS} words` },
    ]);
  }
  return words;
}

/** A LIKE pattern matching `text` literally anywhere (its %, _ and \ escaped; ESCAPE '\'). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The longest run of letters and digits in `word` (the part of a number most likely to be rare). */
export function longestRun(word: string): string {
  let best = '';
  for (const run of word.match(/[\p{L}\p{N}]+/gu) ?? []) if (run.length > best.length) best = run;
  return best;
}

/**
 * One word of `q` (lowercased) as a condition: the word as literal text anywhere in the number, names
 * and references. A plain word may also be found whole through the text search index. A word with
 * punctuation (a number like "inv-2026-00142") is looked up in the trigram index by its longest run of
 * letters and digits alone, then checked whole with strpos, which reads nothing in it as syntax: the
 * index answers a rare run at once, where the whole word's common trigrams ("inv", "202") would make it
 * read most of the index. A word with no run of three is checked by strpos alone.
 */
function wordMatchSql(word: string, p: (value: unknown) => string): string {
  if (/^[\p{L}\p{N}]+$/u.test(word)) {
    return `(d.summary_search @@ plainto_tsquery('simple', ${p(word)}) OR d.summary_text LIKE ${p(containsPattern(word))} ESCAPE '\\')`;
  }
  const whole = `strpos(d.summary_text, ${p(word)}) > 0`;
  const run = longestRun(word);
  return run.length >= 3 ? `(d.summary_text LIKE ${p(containsPattern(run))} ESCAPE '\\' AND ${whole})` : whole;
}

/** What the list selects: the item's columns and its summary. */
const ITEM_COLUMNS = `d.id, d.document_id, d.document_type, d.status, d.is_signed, d.file_size_bytes, d.created_at, d.summary`;

/**
 * Whether a list finds its page's ids first as the search role and reads the rows after
 * (DocumentsRepository.listPage): when it needs an index whose condition is not leak-proof, which row-level
 * security keeps the application role from using. That is a text search (`q`, `references`,
 * `counterparty`: trigram, full-text, the references' GIN) and an amount range (its B-tree; whether that
 * index may lead is decided by amountRangeCountSql). Any other list is one statement as the application
 * role: its status, type, date and upload-time conditions are leak-proof, so the list, due and issue date
 * indexes answer them.
 */
export function usesSearchIndexes(f: SearchFilter): boolean {
  const text =
    (f.q !== undefined && normalizeQuery(f.q) !== '') || f.references !== undefined || f.counterparty !== undefined;
  return text || hasAmountRange(f);
}

export function hasAmountRange(f: SearchFilter): boolean {
  return f.amountMin !== undefined || f.amountMax !== undefined;
}

/**
 * An amount range leads a search through the amount index only when it holds fewer documents of the
 * tenant than this (in its currency): reading them costs a heap fetch each, in no useful order (about
 * 60 ms for this many at a million documents on a busy machine, where counting them takes about 2 ms).
 */
export const AMOUNT_INDEX_ROWS = 5000;

/**
 * How listPageSql writes an amount range:
 * - `lead`: as plain bounds. Under row-level security PostgreSQL uses no column statistics for a condition
 *   that is not leak-proof (any role's, even with a policy admitting every row), and numeric comparisons
 *   are not: it takes two bounds to hold next to no rows, so the amount index leads, whatever else is given.
 * - `combine`: with the bounds as sub-selects, whose values the planner does not look at, so it takes its
 *   default guess for a range (0.5 % of the rows): it may still read the amount index, but combined with a
 *   text index (a bitmap AND), or not at all where the text is rarer.
 * - `filter`: as a CASE, which no index answers and which the planner takes to hold for half the rows: the
 *   range is checked on the rows that the other conditions' indexes, or the list order, find.
 */
export type AmountPlan = 'lead' | 'combine' | 'filter';

/**
 * The amount plan of a search whose amount range holds `inRange` of the tenant's documents (counted by
 * amountRangeCountSql, up to AMOUNT_INDEX_ROWS): a narrow range leads; a wide one is combined with a text
 * search's index, or else only checked. Measured at a million documents on a busy machine
 * (docs/benchmarks.md, Search shapes): a word with valid invoices and a range of 10,000 EUR took 1.2 s with
 * the range leading, 0.1 to 0.27 s combined; a month of due dates with a range of 19,000 EUR took 1.9 s
 * with the range leading (0.4 s as the application role, on the due-date index), 25 to 42 ms with it
 * checked on the rows of the list order.
 */
export function amountPlan(f: SearchFilter, inRange: number): AmountPlan {
  if (inRange < AMOUNT_INDEX_ROWS) return 'lead';
  const textIndex = (f.q !== undefined && normalizeQuery(f.q) !== '') || f.references !== undefined;
  return textIndex ? 'combine' : 'filter';
}

/**
 * How many of the tenant's documents the amount range (and currency) holds, counted up to
 * AMOUNT_INDEX_ROWS: an index-only scan of the amount index, as the search role. It settles what the
 * planner cannot estimate (amountPlan).
 */
export function amountRangeCountSql(tenantId: string, f: SearchFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [tenantId];
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['d.tenant_id = $1'];
  if (f.currency) where.push(`d.summary_currency = ${p(f.currency)}`);
  where.push(...amountConditions(f, p, 'lead'));
  const sql = `SELECT count(*)::int AS n FROM (SELECT 1 FROM documents d WHERE ${where.join(' AND ')}
    LIMIT ${AMOUNT_INDEX_ROWS}) s`;
  return { sql, params };
}

function amountConditions(f: SearchFilter, p: (value: unknown) => string, plan: AmountPlan): string[] {
  const bound = (value: string) => (plan === 'combine' ? `(SELECT ${p(value)}::numeric)` : `${p(value)}::numeric`);
  const conditions: string[] = [];
  if (f.amountMin !== undefined) conditions.push(`d.summary_amount >= ${bound(f.amountMin)}`);
  if (f.amountMax !== undefined) conditions.push(`d.summary_amount <= ${bound(f.amountMax)}`);
  // A document without an amount is in no range, as with the plain bounds.
  return plan === 'filter' && conditions.length > 0
    ? [`CASE WHEN ${conditions.join(' AND ')} THEN true ELSE false END`]
    : conditions;
}

/** The role a search's id query runs as (made by the migration DocumentSearchRole, which says why). */
export const SEARCH_ROLE = 'sdf_search';

/** A position of a page found by the id query: the row's id and its keyset keys. */
export interface PageKey {
  id: string;
  created_at: Date;
  sort_key: string | null;
}

/**
 * The rows of a page whose ids the id query found ($1, uuid[]), of the tenant ($2): by primary key,
 * which row-level security lets the index answer (uuid equality is leak-proof), in any order.
 */
export const PAGE_ROWS_SQL = `SELECT ${ITEM_COLUMNS} FROM documents d WHERE d.id = ANY($1::uuid[]) AND d.tenant_id = $2`;

export interface ListRow {
  id: string;
  document_id: string;
  document_type: string | null;
  status: DocumentStatus;
  is_signed: boolean;
  file_size_bytes: string | number;
  created_at: Date;
  summary: DocumentSummary | null;
  sort_key: string | null;
}

/**
 * One page of the tenant's documents as SQL and its parameters: every filter is a parameter (never
 * spliced into the text), `q` is matched through plainto_tsquery and LIKE with escaped patterns, so any
 * text in it is text. Sorted by the chosen key, then created_at and id in the same direction (keyset).
 * `select`: the items themselves, or only their ids and keys (PageKey: the id query of a search, which
 * reads the search columns alone). `amount`: how the amount range is written (AmountPlan).
 */
export function listPageSql(
  tenantId: string,
  f: SearchFilter,
  select: 'items' | 'keys' = 'items',
  amount: AmountPlan = 'lead',
): { sql: string; params: unknown[] } {
  const params: unknown[] = [tenantId];
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['d.tenant_id = $1'];
  if (f.status) where.push(`d.status = ${p(f.status)}`);
  if (f.documentType) where.push(`d.document_type = ${p(f.documentType)}`);
  if (f.createdFrom) where.push(`d.created_at >= ${p(f.createdFrom.toISOString())}::timestamptz`);
  if (f.createdBefore) where.push(`d.created_at < ${p(f.createdBefore.toISOString())}::timestamptz`);
  if (f.counterparty) {
    where.push(`d.summary_counterparty ILIKE ${p(containsPattern(normalizeQuery(f.counterparty)))} ESCAPE '\\'`);
  }
  if (f.currency) where.push(`d.summary_currency = ${p(f.currency)}`);
  where.push(...amountConditions(f, p, amount));
  if (f.issuedFrom) where.push(`d.summary_issue_date >= ${p(f.issuedFrom)}::date`);
  if (f.issuedTo) where.push(`d.summary_issue_date <= ${p(f.issuedTo)}::date`);
  if (f.dueFrom) where.push(`d.summary_due_date >= ${p(f.dueFrom)}::date`);
  if (f.dueTo) where.push(`d.summary_due_date <= ${p(f.dueTo)}::date`);
  if (f.references) {
    // The references' index holds only rows that name something (PartialSummaryIndexes1796600000000). The
    // first condition implies the second, but the planner cannot tell: said, it lets the index answer.
    where.push(`d.summary_references @> ARRAY[${p(f.references)}]::text[]`, `d.summary_references <> '{}'`);
  }

  let score = '0';
  const q = f.q !== undefined ? normalizeQuery(f.q) : '';
  if (q !== '') {
    for (const word of queryWords(q)) {
      where.push(wordMatchSql(word, p));
    }
    if (f.sort === 'relevance') {
      const whole = p(q.toLowerCase());
      const prefix = p(containsPattern(q.toLowerCase()).slice(1));
      const anywhere = p(containsPattern(q.toLowerCase()));
      // An exact number first, then a document naming it, then numbers that start with it or hold it.
      score = `(CASE WHEN lower(d.summary_number) = ${whole} THEN 4
        WHEN EXISTS (SELECT 1 FROM unnest(d.summary_references) r WHERE lower(r) = ${whole}) THEN 3
        WHEN lower(d.summary_number) LIKE ${prefix} ESCAPE '\\' THEN 2
        WHEN lower(d.summary_number) LIKE ${anywhere} ESCAPE '\\' THEN 1 ELSE 0 END)`;
    }
  }

  const desc = f.order === 'desc';
  // Documents without the sorted field come last either way.
  const last = (type: 'date' | 'numeric'): string =>
    `'${desc ? '-' : ''}${type === 'date' ? 'infinity' : 'Infinity'}'::${type}`;
  const keys: Record<ListSort, { expr: string; type: string } | null> = {
    uploaded: null,
    relevance: { expr: score, type: 'int' },
    issue_date: { expr: `COALESCE(d.summary_issue_date, ${last('date')})`, type: 'date' },
    due_date: { expr: `COALESCE(d.summary_due_date, ${last('date')})`, type: 'date' },
    amount: { expr: `COALESCE(d.summary_amount, ${last('numeric')})`, type: 'numeric' },
  };
  const key = keys[f.sort];
  const cmp = desc ? '<' : '>';
  const dir = desc ? 'DESC' : 'ASC';
  if (f.after) {
    const t = p(f.after.createdAt.toISOString());
    const id = p(f.after.id);
    where.push(
      key
        ? `(${key.expr}, d.created_at, d.id) ${cmp} (${p(f.after.key)}::${key.type}, ${t}::timestamptz, ${id}::uuid)`
        : `(d.created_at, d.id) ${cmp} (${t}::timestamptz, ${id}::uuid)`,
    );
  }
  const order = key ? `${key.expr} ${dir}, d.created_at ${dir}, d.id ${dir}` : `d.created_at ${dir}, d.id ${dir}`;
  const columns = select === 'items' ? ITEM_COLUMNS : 'd.id, d.created_at';
  const sql = `SELECT ${columns}, ${key ? `(${key.expr})::text` : 'NULL'} AS sort_key
    FROM documents d WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${p(f.limit + 1)}`;
  return { sql, params };
}

const SORT_KEY = /^-?(?:\d{1,20}(?:\.\d{1,4})?|\d{4}-\d{2}-\d{2}|infinity|Infinity)$/;

/**
 * The cursor of a sorted or searched list: base64url of `{"s": sort, "o": order, "k": key, "t", "id"}`.
 * It names its sort, so a cursor used with another sort is refused (400), never a silently wrong page.
 */
export function encodeSearchCursor(sort: ListSort, order: ListOrder, position: SearchPosition): string {
  const value = { s: sort, o: order, k: position.key, t: position.createdAt.toISOString(), id: position.id };
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeSearchCursor(cursor: string, sort: ListSort, order: ListOrder): SearchPosition {
  const invalid = () =>
    AppError.badRequest('Malformed cursor', [
      { path: '/cursor', message: 'must be a next_cursor value from a previous page of the same sort' },
    ]);
  const { record, position: at } = readCursor(cursor, 400, invalid);
  const { s, o, k } = record;
  if (s !== sort || o !== order) throw invalid();
  if (sort === 'uploaded' ? k !== null : typeof k !== 'string' || !SORT_KEY.test(k)) throw invalid();
  const { createdAt, id } = at;
  const position: SearchPosition = { key: k as string | null, createdAt, id: id.toLowerCase() };
  if (encodeSearchCursor(sort, order, position) !== cursor) throw invalid();
  return position;
}
