import { useMemo, useState, type ReactNode } from 'react';
import { formatBytes, formatDateTime, formatScalar, humanKey } from '../format.js';
import { download } from '../download.js';
import { usePreparedData } from './data-client.js';
import { DataView } from './data-view.js';
import type { ReadOutcome } from './engine.js';
import { PdfView } from './pdf-view.js';
import { Verdict } from './verdict.js';

type Tab = 'document' | 'data' | 'details' | 'signature' | 'files';

function parseJson(bytes: Uint8Array | undefined): unknown {
  if (!bytes) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  json: 'application/json',
  sig: 'application/jose+json',
};

/** Tabs over the parts of a file; each panel is labelled by its tab, arrows move between tabs. */
function Tabs({ tabs, current, onChange }: { tabs: [Tab, string][]; current: Tab; onChange: (tab: Tab) => void }) {
  return (
    <div className="tabs" role="tablist" aria-label="Parts of the file">
      {tabs.map(([id, label], index) => (
        <button
          key={id}
          id={`tab-${id}`}
          type="button"
          role="tab"
          aria-selected={current === id}
          aria-controls={`panel-${id}`}
          tabIndex={current === id ? 0 : -1}
          onClick={() => onChange(id)}
          onKeyDown={(event) => {
            const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
            if (!step) return;
            // The arrow keys are the tabs' own: without this the browser also scrolls the row by its default
            // step after the focus has brought the next tab into sight, and carries it out of sight again.
            event.preventDefault();
            const next = tabs[(index + step + tabs.length) % tabs.length]![0];
            onChange(next);
            const target = document.getElementById(`tab-${next}`);
            target?.focus({ preventScroll: true });
            target?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
          }}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

function Panel({ id, current, children }: { id: Tab; current: Tab; children: ReactNode }) {
  return (
    <div id={`panel-${id}`} role="tabpanel" aria-labelledby={`tab-${id}`} hidden={current !== id} className="panel">
      {children}
    </div>
  );
}

/**
 * What the reader shows of a judged file: the verdict, then its parts: the PDF, the data, the identity,
 * the signature and the raw entries to download. The documents page shows a stored file the same way.
 */
export function OutcomeView({
  outcome,
  fileName,
  trust,
  trustedBy,
  record,
  showSummary = true,
}: {
  outcome: ReadOutcome;
  fileName: string;
  /** The key list box, shown in the verdict of a signed file whose key is not confirmed yet. */
  trust?: ReactNode;
  /** The address of the key list the file was judged against, named wherever "Trusted" is said. */
  trustedBy?: string | null;
  /** What the service holds about a stored file (its id, when it came), shown first under Details. */
  record?: ReactNode;
  /**
   * Whether to show the summary read from data.json above the parts: the reader does; the documents page
   * says the same facts in its own head (the service's summary, made by the same summarize()), once.
   */
  showSummary?: boolean;
}) {
  const { result, entries } = outcome;
  const [tab, setTab] = useState<Tab>('document');
  const pdf = entries.get('visual.pdf');
  // data.json is parsed and prepared in its own worker: a value of any size never holds this page up.
  const meta = useMemo(
    () => (result.meta ?? parseJson(entries.get('meta.json'))) as Record<string, unknown> | undefined,
    [result.meta, entries],
  );
  const data = usePreparedData(result.checks.data === 'pass' ? entries.get('data.json') : undefined, meta);
  const signature = result.signature;
  const tabs: [Tab, string][] = [
    ['document', 'Document'],
    ['data', 'Data'],
    ['details', 'Details'],
    ['signature', 'Signature'],
    ['files', 'Files'],
  ];
  const pdfShown = pdf && result.checks.pdf === 'pass';
  return (
    <div className="outcome">
      <Verdict result={result} trustedBy={trustedBy ?? null} trust={trust} />
      {showSummary && data.kind === 'ready' && data.summary.length > 0 && (
        <dl className="summary" data-testid="summary">
          {data.summary.map((fact) => (
            <div key={fact.label}>
              <dt>{fact.label}</dt>
              <dd>{fact.value}</dd>
            </div>
          ))}
        </dl>
      )}
      {entries.size > 0 && (
        <>
          <Tabs tabs={tabs} current={tab} onChange={setTab} />
          <Panel id="document" current={tab}>
            {pdfShown ? (
              <PdfView bytes={pdf} label={`Visual layer of ${fileName}`} />
            ) : (
              <p className="notice">
                {pdf
                  ? 'The visual layer is not shown: it did not pass the safety checks, or they did not run.'
                  : 'This file has no visual layer.'}
              </p>
            )}
          </Panel>
          <Panel id="data" current={tab}>
            {data.kind === 'ready' ? (
              <DataView root={data.root} client={data.client} />
            ) : data.kind === 'preparing' ? (
              <p role="status">Preparing the data…</p>
            ) : data.kind === 'failed' ? (
              <p className="notice error">The data could not be shown: {data.message}.</p>
            ) : (
              <p className="notice">The data is not shown: data.json did not pass its checks, or they did not run.</p>
            )}
          </Panel>
          <Panel id="details" current={tab}>
            {record}
            {record && meta && <h3>In the file (meta.json)</h3>}
            {meta ? (
              <dl className="fields" data-testid="meta">
                {Object.entries(meta).map(([key, value]) => (
                  <div key={key}>
                    {/* The file's own id, never to be taken for the id the service gives a stored document. */}
                    <dt>{key === 'document_id' ? 'Document id in the file' : humanKey(key)}</dt>
                    <dd>{metaValue(key, value)}</dd>
                  </div>
                ))}
              </dl>
            ) : (
              <p className="notice">meta.json could not be read.</p>
            )}
          </Panel>
          <Panel id="signature" current={tab}>
            {!result.is_signed ? (
              <p className="notice">This file is not signed.</p>
            ) : signature ? (
              <dl className="fields" data-testid="signature">
                <div>
                  <dt>Signature</dt>
                  <dd>
                    <span
                      className={`badge ${signature.valid ? 'badge-valid' : 'badge-invalid'}`}
                      data-testid="signature-valid"
                    >
                      {signature.valid ? 'Valid' : 'Not valid'}
                    </span>
                    {signature.reason ? ` ${signature.reason}` : ''}
                  </dd>
                </div>
                <div>
                  <dt>Signer&apos;s key</dt>
                  <dd>
                    <span
                      className={`badge ${signature.trusted ? 'badge-valid' : 'badge-neutral'}`}
                      data-testid="signature-trusted"
                    >
                      {signature.trusted ? 'Trusted' : 'Not confirmed'}
                    </span>{' '}
                    {signature.trusted
                      ? trustedBy
                        ? `The key is in the key list at ${trustedBy}.`
                        : 'The key is in the key list you chose.'
                      : 'The signature matches the key inside the file; choose the signer’s published key list to confirm who signed.'}
                  </dd>
                </div>
                <div>
                  <dt>Algorithm</dt>
                  <dd>{signature.algorithm ?? '—'}</dd>
                </div>
                <div>
                  <dt>Key id</dt>
                  <dd>
                    <code className="wrap">{signature.key_id ?? '—'}</code>
                  </dd>
                </div>
                <div>
                  <dt>Signed at</dt>
                  <dd>{formatDateTime(signature.signed_at)}</dd>
                </div>
              </dl>
            ) : (
              <p className="notice">The signature was not checked, because an earlier check failed.</p>
            )}
          </Panel>
          <Panel id="files" current={tab}>
            <ul className="files">
              {[...entries].map(([name, bytes]) => (
                <li key={name}>
                  <code>{name}</code> <span className="muted">{formatBytes(bytes.length)}</span>{' '}
                  <button
                    type="button"
                    className="secondary"
                    onClick={() =>
                      download(bytes, name, TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream')
                    }
                  >
                    Download<span className="visually-hidden"> {name}</span>
                  </button>
                </li>
              ))}
            </ul>
          </Panel>
        </>
      )}
    </div>
  );
}

/** A meta.json value in words: a party by its name, other objects as JSON. */
function metaValue(key: string, value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const name = (value as { name?: unknown }).name;
    return typeof name === 'string' ? name : JSON.stringify(value);
  }
  return formatScalar(key, value, null);
}
