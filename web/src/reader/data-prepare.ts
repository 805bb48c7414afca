/**
 * data.json made ready to show, in the data worker: whatever its size, the page gets a bounded picture
 * of it. Long strings come cut, big objects and lists come as a first page, and containers beyond a node
 * budget come closed; the rest is asked for by path when the person opens it. Plain TypeScript: no DOM.
 */
import { currencyOf } from '../format.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Where a value sits: the index of each step (an object's key by its position), never the key itself. */
export type Path = number[];

export type DataNode =
  | { t: 'scalar'; v: null | boolean | number }
  /** `v` is the whole string when `v.length === length`, else its start. */
  | { t: 'text'; v: string; length: number; path: Path }
  | { t: 'money'; amount: string | number; currency: string }
  /** `page` absent: closed until asked for. `currency` is the one that applies inside (own or inherited). */
  | { t: 'object'; path: Path; total: number; currency: string | null; page?: Field[] }
  /** A list; `scalars` when every item is a scalar (shown on one line). */
  | { t: 'list'; path: Path; total: number; scalars: boolean; page?: DataNode[] }
  /** A list of objects, shown as a table of the first rows' keys. */
  | { t: 'table'; path: Path; total: number; columns: Column[]; moreColumns: number; rows?: Row[] };

export interface Field {
  /** The key, cut when it is very long (`keyLength` says how long it is). */
  key: string;
  keyLength: number;
  node: DataNode;
}

export interface Column {
  key: string;
  numeric: boolean;
}

export interface Row {
  currency: string | null;
  /** One per column; null where the row lacks the key. */
  cells: (DataNode | null)[];
}

export interface Fact {
  label: string;
  value: string;
}

/** Strings longer than this come cut to this many characters; the rest on request. */
export const TEXT_SHOWN = 500;
/** Keys longer than this are shown cut. */
export const KEY_SHOWN = 120;
/** Children of a container in its first page, and in each further page asked for. */
export const FIRST_PAGE = 100;
/** Nodes one answer prepares; containers beyond it come closed. */
export const NODE_BUDGET = 2_000;
/** Rows whose keys make a table's columns, and the most columns shown. */
const COLUMN_ROWS = 500;
const MAX_COLUMNS = 40;

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: Json): value is null | boolean | number | string {
  return value === null || typeof value !== 'object';
}

/** Cuts a string without splitting a surrogate pair. */
export function cut(text: string, length: number): string {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** `{ amount, currency }`: one amount, shown as such wherever it appears. */
export function isMoney(value: unknown): value is { amount: string | number; currency: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const money = value as Record<string, unknown>;
  const keys = Object.keys(money);
  return (
    keys.length === 2 &&
    typeof money.currency === 'string' &&
    money.currency.length <= 12 &&
    (typeof money.amount === 'number' ||
      (typeof money.amount === 'string' && money.amount.length <= 40 && /^-?\d+(\.\d+)?$/.test(money.amount)))
  );
}

/** Each big object's keys, listed once: paths name keys by position. */
const keyCache = new WeakMap<object, string[]>();

export function keysOf(value: { [key: string]: Json }): string[] {
  let keys = keyCache.get(value);
  if (!keys) {
    keys = Object.keys(value);
    keyCache.set(value, keys);
  }
  return keys;
}

/** A key's position in its object (paths name keys by position). */
const positionCache = new WeakMap<object, Map<string, number>>();

function positionOf(value: { [key: string]: Json }, key: string): number {
  const keys = keysOf(value);
  if (keys.length <= 64) return keys.indexOf(key);
  let positions = positionCache.get(value);
  if (!positions) {
    positions = new Map(keys.map((k, i) => [k, i]));
    positionCache.set(value, positions);
  }
  return positions.get(key) ?? -1;
}

/** The keys of a table's first rows, in the order first seen, at most `MAX_COLUMNS` of them. */
const columnCache = new WeakMap<object, { keys: string[]; more: number }>();

function columnsOf(rows: { [key: string]: Json }[]): { keys: string[]; more: number } {
  let columns = columnCache.get(rows);
  if (!columns) {
    const keys = new Set<string>();
    for (const row of rows.slice(0, COLUMN_ROWS)) for (const key of keysOf(row)) keys.add(key);
    columns = { keys: [...keys].slice(0, MAX_COLUMNS), more: Math.max(0, keys.size - MAX_COLUMNS) };
    columnCache.set(rows, columns);
  }
  return columns;
}

interface Budget {
  left: number;
}

/** One value as a node; containers get their first page while the budget lasts. */
function prepareNode(value: Json, path: Path, currency: string | null, budget: Budget): DataNode {
  budget.left--;
  if (typeof value === 'string') {
    return { t: 'text', v: cut(value, TEXT_SHOWN), length: value.length, path };
  }
  if (isScalar(value)) return { t: 'scalar', v: value };
  if (isMoney(value)) return { t: 'money', amount: value.amount, currency: value.currency };
  const open = budget.left > 0;
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isObject)) {
      const rows = value as { [key: string]: Json }[];
      const { keys, more } = columnsOf(rows);
      const firstRows = rows.slice(0, COLUMN_ROWS);
      return {
        t: 'table',
        path,
        total: rows.length,
        columns: keys.map((key) => ({
          key: cut(key, KEY_SHOWN),
          numeric: firstRows.some((row) => typeof row[key] === 'number' || isMoney(row[key])),
        })),
        moreColumns: more,
        rows: open ? prepareRows(rows, path, currency, 0, FIRST_PAGE, budget) : undefined,
      };
    }
    return {
      t: 'list',
      path,
      total: value.length,
      scalars: value.every(isScalar),
      page: open ? prepareItems(value, path, currency, 0, FIRST_PAGE, budget) : undefined,
    };
  }
  const own = currencyOf(value, currency);
  return {
    t: 'object',
    path,
    total: keysOf(value).length,
    currency: own,
    page: open ? prepareFields(value, path, own, 0, FIRST_PAGE, budget) : undefined,
  };
}

function prepareFields(
  value: { [key: string]: Json },
  path: Path,
  currency: string | null,
  offset: number,
  count: number,
  budget: Budget,
): Field[] {
  return keysOf(value)
    .slice(offset, offset + count)
    .map((key, i) => ({
      key: cut(key, KEY_SHOWN),
      keyLength: key.length,
      node: prepareNode(value[key]!, [...path, offset + i], currency, budget),
    }));
}

function prepareItems(
  value: Json[],
  path: Path,
  currency: string | null,
  offset: number,
  count: number,
  budget: Budget,
): DataNode[] {
  return value
    .slice(offset, offset + count)
    .map((item, i) => prepareNode(item, [...path, offset + i], currency, budget));
}

function prepareRows(
  rows: { [key: string]: Json }[],
  path: Path,
  currency: string | null,
  offset: number,
  count: number,
  budget: Budget,
): Row[] {
  const columns = columnsOf(rows).keys;
  return rows.slice(offset, offset + count).map((row, i) => {
    const rowCurrency = currencyOf(row, currency);
    const rowPath = [...path, offset + i];
    return {
      currency: rowCurrency,
      cells: columns.map((key) =>
        Object.hasOwn(row, key)
          ? prepareNode(row[key]!, [...rowPath, positionOf(row, key)], rowCurrency, budget)
          : null,
      ),
    };
  });
}

/** The whole of data.json as its first picture. */
export function prepareRoot(data: Json): DataNode {
  return prepareNode(data, [], null, { left: NODE_BUDGET });
}

/** The value at `path` and the currency that applies there; undefined when the path leads nowhere. */
export function resolve(data: Json, path: Path): { value: Json; currency: string | null } | undefined {
  let value = data;
  let currency: string | null = isObject(data) ? currencyOf(data, null) : null;
  for (const step of path) {
    if (Array.isArray(value)) {
      if (step >= value.length) return undefined;
      value = value[step]!;
    } else if (isObject(value)) {
      const key = keysOf(value)[step];
      if (key === undefined) return undefined;
      value = value[key]!;
    } else {
      return undefined;
    }
    if (isObject(value)) currency = currencyOf(value, currency);
  }
  return { value, currency };
}

export type Page = { t: 'fields'; fields: Field[] } | { t: 'items'; items: DataNode[] } | { t: 'rows'; rows: Row[] };

/**
 * Children `offset` to `offset + count` of the container at `path`. The currency passed down is the
 * one of the container's parent; an object's own is taken again as `prepareNode` does.
 */
export function preparePage(data: Json, path: Path, offset: number, count: number): Page | undefined {
  const at = resolve(data, path);
  if (!at) return undefined;
  const budget = { left: NODE_BUDGET };
  const { value, currency } = at;
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isObject)) {
      return {
        t: 'rows',
        rows: prepareRows(value as { [key: string]: Json }[], path, currency, offset, count, budget),
      };
    }
    return { t: 'items', items: prepareItems(value, path, currency, offset, count, budget) };
  }
  if (isObject(value)) return { t: 'fields', fields: prepareFields(value, path, currency, offset, count, budget) };
  return undefined;
}
