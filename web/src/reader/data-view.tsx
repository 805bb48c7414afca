import { useState } from 'react';
import { currencyOf, formatAmount, formatScalar, humanKey } from '../format.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const PAGE_ROWS = 100;

function isObject(value: Json): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isScalar(value: Json): value is null | boolean | number | string {
  return value === null || typeof value !== 'object';
}

/** `{ amount, currency }`: one amount, shown as such wherever it appears. */
export function isMoney(value: unknown): value is { amount: string | number; currency: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const money = value as Record<string, unknown>;
  const keys = Object.keys(money);
  return (
    keys.length === 2 &&
    typeof money.currency === 'string' &&
    (typeof money.amount === 'number' || (typeof money.amount === 'string' && /^-?\d+(\.\d+)?$/.test(money.amount)))
  );
}

/** Shown on one line: scalars, lists of scalars, amounts. */
function isSimple(value: Json): boolean {
  return isScalar(value) || isMoney(value) || (Array.isArray(value) && value.every(isScalar));
}

/** Numbers and amounts line up on the right in tables. */
function numeric(value: Json): boolean {
  return typeof value === 'number';
}

function Scalar({ name, value, currency }: { name: string; value: Json; currency: string | null }) {
  if (!isScalar(value)) return <Value name={name} value={value} currency={currency} depth={9} />;
  return <>{formatScalar(name, value, currency)}</>;
}

/** An array of objects as a table: one column per key that any row has, scalars only in the cells. */
function Table({ name, rows, currency }: { name: string; rows: { [key: string]: Json }[]; currency: string | null }) {
  const [shown, setShown] = useState(PAGE_ROWS);
  const columns = [...new Set(rows.slice(0, 500).flatMap((row) => Object.keys(row)))];
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={humanKey(name)}>
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            {columns.map((column) => (
              <th
                scope="col"
                key={column}
                className={rows.some((r) => numeric(r[column] ?? null) || isMoney(r[column])) ? 'num' : undefined}
              >
                {humanKey(column)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, shown).map((row, index) => {
            const rowCurrency = currencyOf(row, currency);
            return (
              <tr key={index}>
                <td className="num">{index + 1}</td>
                {columns.map((column) => {
                  const cell = row[column] ?? null;
                  return (
                    <td key={column} className={numeric(cell) || isMoney(cell) ? 'num' : undefined}>
                      {column in row ? <Scalar name={column} value={cell} currency={rowCurrency} /> : ''}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
      {rows.length > shown && (
        <p>
          Showing {shown} of {rows.length} rows.{' '}
          <button type="button" className="link-button" onClick={() => setShown(shown + PAGE_ROWS * 5)}>
            Show more
          </button>
        </p>
      )}
    </div>
  );
}

function Value({
  name,
  value,
  currency,
  depth,
}: {
  name: string;
  value: Json;
  currency: string | null;
  depth: number;
}) {
  if (isScalar(value)) return <>{formatScalar(name, value, currency)}</>;
  if (isMoney(value)) return <>{formatAmount(Number(value.amount), value.currency)}</>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <>None</>;
    if (value.every(isObject)) return <Table name={name} rows={value} currency={currency} />;
    if (value.every(isScalar)) return <>{value.map((v) => formatScalar(name, v, currency)).join(', ')}</>;
    return <pre className="json">{JSON.stringify(value, null, 2)}</pre>;
  }
  if (depth > 6) return <pre className="json">{JSON.stringify(value, null, 2)}</pre>;
  return <Fields value={value} currency={currencyOf(value, currency)} depth={depth + 1} />;
}

function Fields({
  value,
  currency,
  depth,
}: {
  value: { [key: string]: Json };
  currency: string | null;
  depth: number;
}) {
  const entries = Object.entries(value);
  const scalars = entries.filter(([, v]) => isSimple(v));
  const groups = entries.filter(([, v]) => !isSimple(v));
  const Heading = depth <= 1 ? 'h3' : 'h4';
  return (
    <>
      {scalars.length > 0 && (
        <dl className="fields">
          {scalars.map(([key, v]) => (
            <div key={key}>
              <dt>{humanKey(key)}</dt>
              <dd className={numeric(v) || isMoney(v) ? 'num' : undefined}>
                <Value name={key} value={v} currency={currency} depth={depth} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      {groups.map(([key, v]) => (
        <section key={key} className="field-group">
          <Heading>{humanKey(key)}</Heading>
          <Value name={key} value={v} currency={currency} depth={depth} />
        </section>
      ))}
    </>
  );
}

/** data.json as a person reads it: fields, sections for nested objects, tables for lists, and the raw JSON. */
export function DataView({ data }: { data: unknown }) {
  const value = data as Json;
  return (
    <div className="data-view">
      {isObject(value) ? (
        <Fields value={value} currency={currencyOf(value, null)} depth={1} />
      ) : (
        <Value name="data" value={value} currency={null} depth={1} />
      )}
      <details className="raw">
        <summary>Show the data as JSON</summary>
        <pre className="json">{JSON.stringify(value, null, 2)}</pre>
      </details>
    </div>
  );
}

/** The few facts a person looks for first: what it is, its number, who issued it, the total. */
export function summaryOf(data: unknown): { label: string; value: string }[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return [];
  const record = data as Record<string, unknown>;
  const facts: { label: string; value: string }[] = [];
  if (typeof record.document_type === 'string') facts.push({ label: 'Type', value: humanKey(record.document_type) });
  const numberKey = Object.keys(record).find(
    (key) => /(_number|_no|_ref|_id)$/.test(key) && typeof record[key] === 'string' && key !== 'document_type',
  );
  if (numberKey) facts.push({ label: humanKey(numberKey), value: record[numberKey] as string });
  const issuer = (record.issuer ?? record.seller ?? record.supplier) as Record<string, unknown> | undefined;
  if (typeof issuer?.name === 'string') facts.push({ label: 'From', value: issuer.name });
  const totals = record.totals as Record<string, unknown> | undefined;
  const total = totals?.gross ?? totals?.total ?? record.total ?? record.gross_total ?? record.total_amount;
  const currency = typeof record.currency === 'string' ? record.currency : null;
  if (isMoney(total)) facts.push({ label: 'Total', value: formatAmount(Number(total.amount), total.currency) });
  else if (typeof total === 'number') facts.push({ label: 'Total', value: formatAmount(total, currency) });
  return facts;
}
