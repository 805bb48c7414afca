import { createContext, useContext, useState, type ReactNode } from 'react';
import { downloadBlob } from '../download.js';
import { formatAmount, formatScalar, humanKey } from '../format.js';
import { copyBlob, type DataClient } from './data-client.js';
import { FIRST_PAGE, type DataNode, type Field, type Page, type Path, type Row } from './data-prepare.js';

/**
 * data.json as a person reads it: fields, sections for nested objects, tables for lists, and the raw
 * JSON. What is drawn stays bounded whatever the data: the worker sends long strings cut and big
 * containers a page at a time (data-prepare.ts); the rest comes when asked for.
 */

const Client = createContext<DataClient | null>(null);

/** Children fetched per "Show more", and the most characters of one string ever drawn. */
const MORE = 200;
const TEXT_STEP = 5_000;
const TEXT_MAX = 20_000;
/** Characters of the indented JSON drawn. */
const JSON_SHOWN = 20_000;
/**
 * The longest text put on the clipboard. Chromium writes it on the page's own thread, about 15 ms a
 * million characters; longer values are offered as a download, which costs the page nothing.
 */
const COPY_MAX = 2_000_000;

const count = (n: number): string => new Intl.NumberFormat().format(n);

function useClient(): DataClient {
  const client = useContext(Client);
  if (!client) throw new Error('the data view needs its client');
  return client;
}

/** Shown on one line: scalars, lists of scalars, amounts. */
function isSimple(node: DataNode): boolean {
  return node.t === 'scalar' || node.t === 'text' || node.t === 'money' || (node.t === 'list' && node.scalars);
}

function numeric(node: DataNode | null): boolean {
  return node?.t === 'money' || (node?.t === 'scalar' && typeof node.v === 'number');
}

/** A copy, a download or a failure, said where it happened. */
function useNotice(): [string, (text: string) => void] {
  return useState('');
}

/** A string too long to draw: its start, more on request, and the whole of it to copy or download. */
function CutText({ name, node }: { name: string; node: Extract<DataNode, { t: 'text' }> }) {
  const client = useClient();
  const [shown, setShown] = useState(node.v);
  const [notice, setNotice] = useNotice();
  const label = humanKey(name);
  const more = () => {
    client.text(node.path, Math.min(shown.length + TEXT_STEP, TEXT_MAX)).then(
      (text) => text !== undefined && setShown(text),
      (error: Error) => setNotice(`More could not be shown: ${error.message}.`),
    );
  };
  const copy = () => {
    copyBlob(client.blob(node.path)).then(
      () => setNotice(`Copied all ${count(node.length)} characters.`),
      (error: Error) => setNotice(`The value could not be copied (${error.message}); download it instead.`),
    );
  };
  const save = () => {
    client.blob(node.path).then(
      (blob) => blob && downloadBlob(blob, `${name.slice(0, 60).replace(/[^\w.-]+/g, '_') || 'value'}.txt`),
      (error: Error) => setNotice(`The value could not be downloaded: ${error.message}.`),
    );
  };
  return (
    <span className="cut-value">
      <span className="cut-text">{shown}…</span>{' '}
      <span className="muted">
        ({count(shown.length)} of {count(node.length)} characters shown)
      </span>{' '}
      <span className="cut-actions">
        {shown.length < Math.min(node.length, TEXT_MAX) && (
          <button type="button" className="link-button" onClick={more}>
            Show more<span className="visually-hidden"> of {label}</span>
          </button>
        )}
        {node.length <= COPY_MAX ? (
          <button type="button" className="link-button" onClick={copy}>
            Copy the whole value<span className="visually-hidden"> of {label}</span>
          </button>
        ) : (
          <span className="muted">Too long to copy from here.</span>
        )}
        <button type="button" className="link-button" onClick={save}>
          Download the whole value<span className="visually-hidden"> of {label}</span>
        </button>
      </span>
      <span role="status" className="cut-notice">
        {notice}
      </span>
    </span>
  );
}

function Scalar({ name, node, currency }: { name: string; node: DataNode; currency: string | null }) {
  switch (node.t) {
    case 'scalar':
      return <>{formatScalar(name, node.v, currency)}</>;
    case 'text':
      return node.v.length === node.length ? (
        <>{formatScalar(name, node.v, currency)}</>
      ) : (
        <CutText name={name} node={node} />
      );
    case 'money':
      return <>{formatAmount(Number(node.amount), node.currency)}</>;
    case 'object':
    case 'list':
    case 'table':
      return <Container name={name} node={node} currency={currency} depth={9} />;
  }
}

type ContainerNode = Extract<DataNode, { t: 'object' | 'list' | 'table' }>;

function initialOf(node: ContainerNode): (Field | DataNode | Row)[] | undefined {
  return node.t === 'object' ? node.page : node.t === 'list' ? node.page : node.rows;
}

function childrenOf(page: Page | undefined): (Field | DataNode | Row)[] {
  if (!page) return [];
  return page.t === 'fields' ? page.fields : page.t === 'items' ? page.items : page.rows;
}

/** A container's children as far as asked for: closed ones fetch their first page when opened. */
function usePages(path: Path, initial: (Field | DataNode | Row)[] | undefined) {
  const client = useClient();
  const [children, setChildren] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const load = (n: number) => {
    setBusy(true);
    const have = children ?? [];
    client
      .page(path, have.length, n)
      .then(
        (page) => setChildren([...have, ...childrenOf(page)]),
        (failure: Error) => setError(`This part could not be shown: ${failure.message}.`),
      )
      .finally(() => setBusy(false));
  };
  return { children, busy, error, load };
}

function nounOf(node: ContainerNode, n: number): string {
  const noun = node.t === 'object' ? 'field' : node.t === 'table' ? 'row' : 'item';
  return `${count(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** An object, a list or a table, a page at a time; closed until opened when the worker left it so. */
function Container({
  name,
  node,
  currency,
  depth,
}: {
  name: string;
  node: ContainerNode;
  currency: string | null;
  depth: number;
}) {
  const { children, busy, error, load } = usePages(node.path, initialOf(node));
  if (node.total === 0) return <>None</>;
  const label = humanKey(name);
  const step = node.t === 'table' ? MORE * 2.5 : MORE;
  let body: ReactNode = null;
  if (children) {
    if (node.t === 'object') body = <Fields fields={children as Field[]} currency={node.currency} depth={depth + 1} />;
    else if (node.t === 'table') body = <Table name={name} node={node} rows={children as Row[]} />;
    else body = <List name={name} node={node} items={children as DataNode[]} currency={currency} depth={depth} />;
  }
  return (
    <>
      {body}
      {children === undefined ? (
        <button
          type="button"
          className="link-button"
          aria-expanded="false"
          disabled={busy}
          onClick={() => load(FIRST_PAGE)}
        >
          Show the {nounOf(node, node.total)}
          <span className="visually-hidden"> of {label}</span>
        </button>
      ) : (
        children.length < node.total && (
          <p className="more">
            Showing {count(children.length)} of {nounOf(node, node.total)}.{' '}
            <button type="button" className="link-button" disabled={busy} onClick={() => load(step)}>
              Show {count(Math.min(step, node.total - children.length))} more
              <span className="visually-hidden"> of {label}</span>
            </button>
          </p>
        )
      )}
      {error && <span className="notice error">{error}</span>}
    </>
  );
}

function List({
  name,
  node,
  items,
  currency,
  depth,
}: {
  name: string;
  node: Extract<DataNode, { t: 'list' }>;
  items: DataNode[];
  currency: string | null;
  depth: number;
}) {
  if (node.scalars) {
    return (
      <>
        {items.map((item, index) => (
          <span key={index}>
            {index > 0 && ', '}
            <Scalar name={name} node={item} currency={currency} />
          </span>
        ))}
      </>
    );
  }
  return (
    <ol className="data-list">
      {items.map((item, index) => (
        <li key={index}>
          <Value name={name} node={item} currency={currency} depth={depth + 1} />
        </li>
      ))}
    </ol>
  );
}

/** A list of objects as a table: one column per key of its first rows, scalars in the cells. */
function Table({ name, node, rows }: { name: string; node: Extract<DataNode, { t: 'table' }>; rows: Row[] }) {
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={humanKey(name)}>
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            {node.columns.map((column, index) => (
              <th scope="col" key={index} className={column.numeric ? 'num' : undefined}>
                {humanKey(column.key)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              <td className="num">{index + 1}</td>
              {row.cells.map((cell, column) => (
                <td key={column} className={numeric(cell) ? 'num' : undefined}>
                  {cell && <Scalar name={node.columns[column]!.key} node={cell} currency={row.currency} />}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {node.moreColumns > 0 && (
        <p className="muted">
          {count(node.moreColumns)} more columns are not shown; they are in the JSON below and in data.json.
        </p>
      )}
    </div>
  );
}

function Value({
  name,
  node,
  currency,
  depth,
}: {
  name: string;
  node: DataNode;
  currency: string | null;
  depth: number;
}) {
  if (node.t === 'scalar' || node.t === 'text' || node.t === 'money') {
    return <Scalar name={name} node={node} currency={currency} />;
  }
  return <Container name={name} node={node} currency={currency} depth={depth} />;
}

function Fields({ fields, currency, depth }: { fields: Field[]; currency: string | null; depth: number }) {
  const scalars = fields.filter((field) => isSimple(field.node));
  const groups = fields.filter((field) => !isSimple(field.node));
  const Heading = depth <= 1 ? 'h3' : 'h4';
  const keyOf = (field: Field) =>
    field.keyLength > field.key.length ? `${humanKey(field.key)}…` : humanKey(field.key);
  return (
    <>
      {scalars.length > 0 && (
        <dl className="fields">
          {scalars.map((field, index) => (
            <div key={index} className={field.node.t === 'text' && field.node.length > 120 ? 'wide' : undefined}>
              <dt>{keyOf(field)}</dt>
              <dd className={numeric(field.node) ? 'num' : undefined}>
                <Value name={field.key} node={field.node} currency={currency} depth={depth} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      {groups.map((field, index) => (
        <section key={index} className="field-group">
          <Heading>{keyOf(field)}</Heading>
          <Value name={field.key} node={field.node} currency={currency} depth={depth} />
        </section>
      ))}
    </>
  );
}

/** The data as indented JSON, drawn only once asked for and only its start; all of it to copy. */
function RawJson() {
  const client = useClient();
  const [json, setJson] = useState<{ head: string; length: number } | null>(null);
  const [notice, setNotice] = useNotice();
  const copy = () => {
    copyBlob(client.blob(null)).then(
      () => setNotice(`Copied all ${count(json?.length ?? 0)} characters of JSON.`),
      (error: Error) => setNotice(`The JSON could not be copied (${error.message}); download data.json instead.`),
    );
  };
  return (
    <details
      className="raw"
      onToggle={(event) => {
        if ((event.currentTarget as HTMLDetailsElement).open && !json) {
          client
            .json(JSON_SHOWN)
            .then(setJson, (error: Error) => setNotice(`The JSON could not be made: ${error.message}.`));
        }
      }}
    >
      <summary>Show the data as JSON</summary>
      {json && (
        <>
          <pre className="json" tabIndex={0} aria-label="The data as JSON">
            {json.head}
            {json.head.length < json.length && '…'}
          </pre>
          {json.head.length < json.length && (
            <p className="muted">
              The first {count(json.head.length)} of {count(json.length)} characters are shown.
            </p>
          )}
          {json.length <= COPY_MAX ? (
            <button type="button" className="secondary" onClick={copy}>
              Copy the JSON
            </button>
          ) : (
            <button
              type="button"
              className="secondary"
              onClick={() =>
                client.blob(null).then(
                  (blob) => blob && downloadBlob(blob, 'data.json'),
                  (error: Error) => setNotice(`The JSON could not be downloaded: ${error.message}.`),
                )
              }
            >
              Download the JSON
            </button>
          )}
        </>
      )}
      <p role="status" className="cut-notice">
        {notice}
      </p>
    </details>
  );
}

/** data.json, prepared by its worker (data-client.ts). */
export function DataView({ root, client }: { root: DataNode; client: DataClient }) {
  return (
    <Client.Provider value={client}>
      <div className="data-view">
        {root.t === 'object' ? (
          <Container name="data" node={root} currency={root.currency} depth={0} />
        ) : (
          <Value name="data" node={root} currency={null} depth={1} />
        )}
        <RawJson />
      </div>
    </Client.Provider>
  );
}
