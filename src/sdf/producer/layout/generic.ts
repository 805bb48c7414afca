import type { Block, Row, Table, TableColumn } from './blocks.js';
import { formatAmount, formatScalar, humanize, isMoney, isRecord } from './format.js';

/** A table with more columns than this is unreadable on A4 portrait; its items become lists of fields. */
const MAX_TABLE_COLUMNS = 7;
/** A list of plain values longer than this becomes a numbered table instead of one line. */
const LONG_LIST = 8;

const isScalar = (value: unknown): boolean => value === null || typeof value !== 'object' || isMoney(value);

/** A value written on one line: a scalar, money, or a small object's fields after each other. */
export function inline(value: unknown): string {
  if (isScalar(value)) return formatScalar(value);
  if (Array.isArray(value)) return value.map(inline).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${humanize(k)}: ${inline(v)}`)
    .join(', ');
}

/**
 * Every field of a value as labelled rows, nested fields indented under their parent, in document
 * order. Iterative, so data nested deeper than the call stack still renders.
 */
export function rowsOf(value: unknown, indent = 0): Row[] {
  const out: Row[] = [];
  const stack: { value: unknown; label?: string; indent: number }[] = [];
  const pushChildren = (node: unknown, level: number): void => {
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], label: `${i + 1}.`, indent: level });
    } else if (isRecord(node)) {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ value: entries[i]![1], label: humanize(entries[i]![0]), indent: level });
      }
    }
  };
  if (isScalar(value)) return [{ text: formatScalar(value), indent }];
  pushChildren(value, indent);
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (isScalar(item.value)) {
      out.push({ label: item.label, text: formatScalar(item.value), indent: item.indent });
    } else if (Array.isArray(item.value) && item.value.every(isScalar) && item.value.length <= LONG_LIST) {
      out.push({ label: item.label, text: inline(item.value), indent: item.indent });
    } else {
      out.push({ label: item.label, text: '', indent: item.indent });
      pushChildren(item.value, item.indent + 1);
    }
  }
  return out;
}

/** Whether an array reads as a table: objects of plain values, few enough columns. */
function tableKeys(items: unknown[]): string[] | undefined {
  if (items.length === 0 || !items.every(isRecord)) return undefined;
  const keys = new Set<string>();
  for (const item of items as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(item)) {
      if (!isScalar(value) && !(Array.isArray(value) && value.every(isScalar))) return undefined;
      keys.add(key);
    }
  }
  return keys.size <= MAX_TABLE_COLUMNS ? [...keys] : undefined;
}

/** One currency for every amount of a column, so the header can name it once. */
function sharedCurrency(values: unknown[]): string | undefined {
  let currency: string | undefined;
  for (const value of values) {
    if (value === undefined || value === null) continue;
    if (!isMoney(value)) return undefined;
    if (currency !== undefined && value.currency !== currency) return undefined;
    currency = value.currency;
  }
  return currency;
}

const NUMERIC = /^-?\d+(\.\d+)?$/;

/**
 * A table column from its cells: numbers and amounts right-aligned; amounts of one currency as plain
 * amounts under a header naming the currency.
 */
export function tableColumn(
  header: string,
  values: unknown[],
  align?: TableColumn['align'],
): { column: TableColumn; cells: string[] } {
  const currency = sharedCurrency(values);
  if (currency !== undefined) {
    const cells = values.map((v) => (isMoney(v) ? formatAmount(v.amount, v.currency) : ''));
    return { column: { header: `${header} (${currency})`, align: 'right' }, cells };
  }
  const cells = values.map((v) => (v === undefined ? '' : inline(v)));
  const numeric = values.every(
    (v) =>
      v === undefined ||
      v === null ||
      typeof v === 'number' ||
      isMoney(v) ||
      (typeof v === 'string' && NUMERIC.test(v)),
  );
  return { column: { header, align: align ?? (numeric ? 'right' : 'left') }, cells };
}

/** Builds a table from named columns of values (one array per column, one entry per row). */
export function buildTable(
  columns: { header: string; values: unknown[]; align?: TableColumn['align'] }[],
  rowCount: number,
): Table {
  const built = columns.map((c) => tableColumn(c.header, c.values, c.align));
  const rows: string[][] = [];
  for (let r = 0; r < rowCount; r++) rows.push(built.map((b) => b.cells[r]!));
  return { columns: built.map((b) => b.column), rows };
}

/** The blocks of one top-level field of any document: a heading and its table, list or fields. */
export function sectionBlocks(key: string, value: unknown): Block[] {
  const heading: Block = { kind: 'heading', text: humanize(key) };
  if (Array.isArray(value)) {
    const keys = tableKeys(value);
    if (keys) {
      const items = value as Record<string, unknown>[];
      const columns = keys.map((k) => ({ header: humanize(k), values: items.map((item) => item[k]) }));
      return [heading, { kind: 'table', table: buildTable(columns, items.length) }];
    }
    if (value.every(isScalar) && value.length > LONG_LIST) {
      const table = buildTable(
        [
          { header: 'No.', values: value.map((_, i) => i + 1), align: 'left' },
          { header: humanize(key), values: value },
        ],
        value.length,
      );
      return [heading, { kind: 'table', table: { ...table, compact: true } }];
    }
  }
  if (typeof value === 'string' && value.length > 80) return [heading, { kind: 'paragraph', text: value }];
  return [heading, { kind: 'columns', columns: [{ rows: rowsOf(value) }] }];
}

/**
 * Every field of `data` not yet shown: short plain values as one list of fields, then each other field
 * as a section of its own, in document order.
 */
export function remainingBlocks(data: Record<string, unknown>, shown: ReadonlySet<string>): Block[] {
  const facts: Row[] = [];
  const sections: Block[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (shown.has(key)) continue;
    const short = isScalar(value) && formatScalar(value).length <= 80;
    if (short) facts.push({ label: humanize(key), text: formatScalar(value) });
    else sections.push(...sectionBlocks(key, value));
  }
  const head: Block[] =
    facts.length > 0
      ? [
          { kind: 'heading', text: 'Details' },
          { kind: 'columns', columns: [{ rows: facts }] },
        ]
      : [];
  return [...head, ...sections];
}

/** Picks the first key of `names` that `data` holds. */
export function pick(data: Record<string, unknown>, names: readonly string[]): string | undefined {
  return names.find((n) => data[n] !== undefined && data[n] !== null);
}
