import type { Limits } from './limits.js';
import { checkJsonShape } from './rules/json-shape.js';
import { isUnsafeText } from './rules/text.js';

/**
 * What a person knows a document by, read from its data.json and meta.json. Rule 7: meta's
 * document_id identifies the file, never the business document, so the business number, the names,
 * the amount and the dates come from data.json; the issuer alone comes from meta.json (F4), for every
 * type, so the party that produced the file is named the same way whatever the schema calls it.
 */
export interface DocumentSummary {
  /** Type and business number, e.g. "Invoice INV-2026-00142". */
  title: string;
  /** The business number (invoice_number, po_number, nomination_ref, ...); null when none was found. */
  number: string | null;
  /** meta.json's issuer name. */
  issuer: string | null;
  /** The other party, from data.json (an invoice's buyer, an order's supplier, ...). */
  counterparty: string | null;
  /** The gross total as a decimal string ("1713.60"), with its ISO 4217 currency. */
  amount: string | null;
  currency: string | null;
  /** Calendar dates, YYYY-MM-DD. */
  issue_date: string | null;
  due_date: string | null;
  /** Business numbers of other documents this one names (an invoice's order, a nomination's contract). */
  references: string[];
}

/**
 * Where a document type keeps each field: JSON pointers (RFC 6901) into data.json, tried in order,
 * the first that holds a usable value wins. A party pointer may point at a string or at an object
 * with a `name`; an amount pointer at `{amount, currency}` or at a bare amount.
 */
export interface SummaryMapping {
  label?: string;
  number?: string[];
  counterparty?: string[];
  amount?: string[];
  currency?: string[];
  issue_date?: string[];
  due_date?: string[];
  references?: string[];
}

/** A tenant's mapping as the validation receives it: used for a document whose schema is that registered schema. */
export interface RegisteredSummaryMapping {
  /** meta.json's schema_id the document must name. */
  schema_id: string;
  /** Lowercase hex SHA-256 of the registered schema's canonical JSON: the document's schema.json must have it. */
  schema_sha256: string;
  mapping: SummaryMapping;
}

/** The pointer fields of a mapping, in the order they are documented. */
export const SUMMARY_MAPPING_POINTER_FIELDS = [
  'number',
  'counterparty',
  'amount',
  'currency',
  'issue_date',
  'due_date',
  'references',
] as const;

/** Bounds of a registered mapping: pointers per field, characters and reference tokens per pointer. */
export const SUMMARY_MAPPING_LIMITS = { pointers: 8, pointerLength: 200, tokens: 16 } as const;

/**
 * What is wrong with `pointer` as a summary field's JSON pointer, or null: RFC 6901 (each `~` followed by
 * 0 or 1), pointing inside data.json (never the empty pointer, data.json as a whole), bounded.
 */
export function summaryPointerProblem(pointer: unknown): string | null {
  if (typeof pointer !== 'string') return 'must be a JSON pointer (a string)';
  if (pointer === '') return 'must point inside data.json (the empty pointer is data.json itself)';
  if (!pointer.startsWith('/')) return 'must be a JSON pointer (RFC 6901): it starts with "/"';
  if (pointer.length > SUMMARY_MAPPING_LIMITS.pointerLength) {
    return `must be at most ${SUMMARY_MAPPING_LIMITS.pointerLength} characters`;
  }
  if (/~(?![01])/.test(pointer)) return 'must be a JSON pointer (RFC 6901): "~" is written only as "~0" or "~1"';
  if (pointer.split('/').length - 1 > SUMMARY_MAPPING_LIMITS.tokens) {
    return `must have at most ${SUMMARY_MAPPING_LIMITS.tokens} reference tokens`;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(pointer) || isUnsafeText(pointer)) return 'must not hold control characters';
  return null;
}

/**
 * A mapping as a tenant sends it (any JSON), checked: known fields with a list of pointers each, `label`
 * a short text. Every problem is named by its path under `base` (e.g. /summary_mapping/number/1).
 */
export function readSummaryMapping(
  value: unknown,
  base: string,
): { mapping: SummaryMapping; problems: [] } | { mapping: null; problems: { path: string; message: string }[] } {
  const problems: { path: string; message: string }[] = [];
  const record = asRecord(value);
  if (!record) return { mapping: null, problems: [{ path: base, message: 'must be an object' }] };
  const keys = Object.keys(record);
  if (keys.length === 0) problems.push({ path: base, message: 'must name at least one field' });
  const mapping: SummaryMapping = {};
  for (const key of keys.slice(0, 32)) {
    const path = `${base}/${key.replace(/~/g, '~0').replace(/\//g, '~1').slice(0, 64)}`;
    const field = record[key];
    if (key === 'label') {
      const label = typeof field === 'string' ? text(field, SUMMARY_LIMITS.label + 1) : null;
      if (label === null || label !== field || label.length > SUMMARY_LIMITS.label) {
        problems.push({ path, message: `must be a text of 1 to ${SUMMARY_LIMITS.label} printable characters` });
      } else {
        mapping.label = label;
      }
      continue;
    }
    if (!(SUMMARY_MAPPING_POINTER_FIELDS as readonly string[]).includes(key)) {
      problems.push({
        path,
        message: `is not a summary field (known: label, ${SUMMARY_MAPPING_POINTER_FIELDS.join(', ')})`,
      });
      continue;
    }
    const pointers = field;
    if (!Array.isArray(pointers) || pointers.length === 0 || pointers.length > SUMMARY_MAPPING_LIMITS.pointers) {
      problems.push({ path, message: `must be a list of 1 to ${SUMMARY_MAPPING_LIMITS.pointers} JSON pointers` });
      continue;
    }
    let good = true;
    pointers.forEach((pointer: unknown, i) => {
      const problem = summaryPointerProblem(pointer);
      if (problem === null) return;
      good = false;
      problems.push({ path: `${path}/${i}`, message: problem });
    });
    if (good) mapping[key as (typeof SUMMARY_MAPPING_POINTER_FIELDS)[number]] = pointers as string[];
  }
  if (keys.length > 32) problems.push({ path: base, message: 'names more fields than a summary has' });
  return problems.length > 0 ? { mapping: null, problems } : { mapping, problems: [] };
}

/** The registered mapping for a document naming `schemaId` whose schema.json has `schemaSha256`, if any. */
export function registeredMappingFor(
  mappings: readonly RegisteredSummaryMapping[] | undefined,
  schemaId: unknown,
  schemaSha256: string | null | undefined,
): SummaryMapping | undefined {
  if (!mappings || typeof schemaId !== 'string' || !schemaSha256) return undefined;
  const hash = schemaSha256.toLowerCase();
  return mappings.find((m) => m.schema_id === schemaId && m.schema_sha256 === hash)?.mapping;
}

/** Bounds: a summary goes into indexed columns and every list item, whatever the file holds. */
export const SUMMARY_LIMITS = {
  title: 200,
  number: 100,
  name: 200,
  reference: 100,
  references: 10,
  label: 60,
} as const;

/**
 * The mappings of the known document types, one place. Field names follow the examples in both
 * layouts the format's examples use (seller/buyer with order_number, issuer/recipient with po_number).
 */
export const BUILT_IN_MAPPINGS: Readonly<Record<string, SummaryMapping>> = {
  invoice: {
    label: 'Invoice',
    number: ['/invoice_number', '/number'],
    counterparty: ['/buyer', '/recipient', '/customer'],
    amount: ['/totals/gross', '/total', '/amount'],
    issue_date: ['/issue_date', '/invoice_date'],
    due_date: ['/due_date', '/payment/due_date'],
    references: ['/order_ref', '/po_number', '/contract_ref', '/delivery_ref'],
  },
  purchase_order: {
    label: 'Purchase order',
    number: ['/po_number', '/order_number', '/number'],
    counterparty: ['/supplier', '/seller', '/vendor'],
    amount: ['/totals/gross', '/total', '/amount'],
    issue_date: ['/issue_date', '/order_date'],
    // An order is due when it is to be delivered.
    due_date: ['/due_date', '/delivery_date'],
    references: ['/contract_ref', '/quote_ref', '/framework_ref'],
  },
  nomination: {
    label: 'Nomination',
    number: ['/nomination_number', '/nomination_ref', '/nomination_id'],
    counterparty: ['/agent', '/counterparty', '/transport_operator'],
    amount: ['/totals/gross', '/total'],
    issue_date: ['/issue_date', '/submitted_at'],
    // A nomination is due on the day (or the laycan) it schedules.
    due_date: ['/gas_day', '/laycan/start'],
    references: ['/contract_ref', '/order_ref'],
  },
};

/** For a type nobody mapped: the usual names, then the first identifier-like strings (see genericNumber). */
const GENERIC: SummaryMapping = {
  number: ['/number', '/document_number'],
  counterparty: ['/recipient', '/buyer', '/customer', '/counterparty', '/supplier'],
  amount: ['/totals/gross', '/total', '/amount'],
  issue_date: ['/issue_date', '/date', '/document_date'],
  due_date: ['/due_date'],
  references: [],
};

const IDENTIFIER_KEY = /(^|_)(number|no|nr|id|ref|reference)$/i;
const REFERENCE_KEY = /(^|_)(ref|reference)$/i;
const AMOUNT = /^-?\d{1,15}(\.\d{1,4})?$/;
const CURRENCY = /^[A-Z]{3}$/;
const DATE_PREFIX = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/;

/** The mapping key of a document type: "Purchase-Order" and "purchase_order" are the same type. */
export function mappingKey(documentType: string): string {
  return documentType
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * The summary of a document. `data` and `meta` are parsed JSON of any shape (an invalid file's too):
 * nothing here throws on odd types, and every string is bounded. `mapping`, when given (a tenant's
 * own), is used for the fields it names, the built-in or generic mapping for the rest.
 */
export function summarize(data: unknown, meta: unknown, mapping?: SummaryMapping): DocumentSummary {
  const d = asRecord(data);
  const m = asRecord(meta);
  const type = text(m?.document_type, SUMMARY_LIMITS.label) ?? text(d?.document_type, SUMMARY_LIMITS.label);
  const builtIn = type !== null ? BUILT_IN_MAPPINGS[mappingKey(type)] : undefined;
  const base = builtIn ?? GENERIC;
  const pick = <K extends keyof SummaryMapping>(key: K): SummaryMapping[K] => mapping?.[key] ?? base[key];

  let number = first(d, pick('number'), (v) => identifier(v));
  let references = collectReferences(d, pick('references') ?? []);
  if (!builtIn && !mapping?.number && number === null && d) {
    const found = genericIdentifiers(d);
    number = found.number;
    if (!mapping?.references) references = dedupe([...references, ...found.references]);
  }
  if (number !== null) references = references.filter((r) => r !== number);

  const money = first(d, pick('amount'), moneyOf);
  const currencyOverride = mapping?.currency ? first(d, mapping.currency, currencyOf) : null;
  const label = text(mapping?.label, SUMMARY_LIMITS.label) ?? builtIn?.label ?? humanize(type) ?? 'Document';
  return {
    title: cut(number !== null ? `${label} ${number}` : label, SUMMARY_LIMITS.title),
    number,
    issuer: issuerName(m?.issuer),
    counterparty: first(d, pick('counterparty'), partyName),
    amount: money?.amount ?? null,
    currency: currencyOverride ?? money?.currency ?? null,
    issue_date: first(d, pick('issue_date'), dateOf),
    due_date: first(d, pick('due_date'), dateOf),
    references: references.slice(0, SUMMARY_LIMITS.references),
  };
}

/** Whether `pointer` is a JSON pointer this module can follow (RFC 6901, at most 16 tokens). */
export function isSummaryPointer(pointer: unknown): pointer is string {
  return typeof pointer === 'string' && pointer.length <= 200 && /^(\/[^/]*){1,16}$/.test(pointer);
}

/** RFC 6901 lookup over own properties only (never the prototype), on any value. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  if (!isSummaryPointer(pointer)) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d{0,5})$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (typeof node === 'object' && node !== null && Object.hasOwn(node, token)) {
      node = (node as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return node;
}

function first<T>(
  data: Record<string, unknown> | null,
  pointers: string[] | undefined,
  read: (v: unknown) => T | null,
) {
  if (!data || !Array.isArray(pointers)) return null;
  for (const pointer of pointers.slice(0, 16)) {
    const value = read(resolvePointer(data, pointer));
    if (value !== null) return value;
  }
  return null;
}

function collectReferences(data: Record<string, unknown> | null, pointers: string[]): string[] {
  if (!data) return [];
  const found: string[] = [];
  for (const pointer of pointers.slice(0, 16)) {
    const value = resolvePointer(data, pointer);
    const values = Array.isArray(value) ? value.slice(0, SUMMARY_LIMITS.references) : [value];
    for (const v of values) {
      const ref = identifier(v);
      if (ref !== null) found.push(ref);
    }
  }
  return dedupe(found);
}

/** A type nobody mapped: the first identifier-like top-level string is the number, the *_ref ones references. */
function genericIdentifiers(data: Record<string, unknown>): { number: string | null; references: string[] } {
  let number: string | null = null;
  const references: string[] = [];
  let seen = 0;
  for (const key in data) {
    if (!Object.hasOwn(data, key) || ++seen > 200) break;
    if (key === 'document_type' || !IDENTIFIER_KEY.test(key)) continue;
    const value = identifier(data[key]);
    if (value === null) continue;
    if (REFERENCE_KEY.test(key)) references.push(value);
    else number ??= value;
  }
  return { number, references };
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Printable text: unsafe strings (NUL, lone surrogates) refused, control characters and runs of space folded. */
function text(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  // Only the head is ever kept: a huge string costs no more than a short one.
  const head = value.length > 4 * max + 64 ? value.slice(0, 4 * max + 64) : value;
  // eslint-disable-next-line no-control-regex
  const folded = cut(head.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ').trim(), max).trim();
  return folded === '' || isUnsafeText(folded) ? null : folded;
}

function identifier(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return text(value, SUMMARY_LIMITS.reference);
}

/** Cuts at a code point, never inside a surrogate pair. */
function cut(value: string, max: number): string {
  if (value.length <= max) return value;
  const end = /[\ud800-\udbff]/.test(value[max - 1] ?? '') ? max - 1 : max;
  return value.slice(0, end);
}

function partyName(value: unknown): string | null {
  if (typeof value === 'string') return text(value, SUMMARY_LIMITS.name);
  const record = asRecord(value);
  return record ? text(record.name, SUMMARY_LIMITS.name) : null;
}

/** F4: meta's issuer is `{name, id}` (service shape) or a plain name (format shape). */
function issuerName(value: unknown): string | null {
  return partyName(value);
}

function moneyOf(value: unknown): { amount: string; currency: string | null } | null {
  const record = asRecord(value);
  const amount = amountOf(record ? record.amount : value);
  if (amount === null) return null;
  return { amount, currency: record ? currencyOf(record.currency) : null };
}

function amountOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) < 1e15) {
    return value.toFixed(Number.isInteger(value) ? 0 : Math.min(4, decimals(value)));
  }
  return typeof value === 'string' && AMOUNT.test(value.trim()) ? value.trim() : null;
}

function decimals(value: number): number {
  const s = String(value);
  const dot = s.indexOf('.');
  return dot < 0 || s.includes('e') ? 4 : s.length - dot - 1;
}

function currencyOf(value: unknown): string | null {
  return typeof value === 'string' && CURRENCY.test(value) ? value : null;
}

/** A calendar date (YYYY-MM-DD, or the date of an RFC 3339 date-time as written), checked to exist. */
function dateOf(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const match = DATE_PREFIX.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const days = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  return day <= days ? `${match[1]}-${match[2]}-${match[3]}` : null;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function humanize(type: string | null): string | null {
  if (type === null) return null;
  const words = type.replace(/[_-]+/g, ' ').trim();
  return words === '' ? null : cut(words[0]!.toUpperCase() + words.slice(1), SUMMARY_LIMITS.label);
}

function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * The summary of a file from its data.json bytes and parsed meta.json, or null when data.json is
 * missing or does not parse (an invalid file still gets one when it does). The shape is bounded
 * before JSON.parse, as the validation's data check bounds it.
 */
export function summarizeDataBytes(
  dataBytes: Buffer | undefined,
  meta: unknown,
  limits: Pick<Limits, 'maxJsonDepth' | 'maxJsonValues'>,
  mapping?: SummaryMapping,
): DocumentSummary | null {
  if (dataBytes === undefined) return null;
  let data: unknown;
  try {
    checkJsonShape(dataBytes, 'data.json', limits, 'SDF_ERROR_INVALID_DATA');
    data = JSON.parse(dataBytes.toString('utf8'));
  } catch {
    return null;
  }
  return summarize(data, meta, mapping);
}
