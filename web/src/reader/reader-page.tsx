import { useCallback, useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { formatBytes } from '../format.js';
import { loadFile, readArchive, type ReadOutcome, type ReadProgress } from './engine.js';
import { OutcomeView } from './outcome-view.js';
import type { Jwk } from './protocol.js';
import { allowedByPolicy, fetchJwks } from './trust.js';

const STAGE_LABELS: Record<string, string> = {
  container: 'Opening the archive',
  meta: 'Reading its identity',
  schema: 'Checking the schema',
  data: 'Checking the data',
  pdf: 'Inspecting the PDF',
  signature: 'Checking the signature',
};

type State =
  | { kind: 'idle' }
  | { kind: 'working'; name: string; size: number; progress: ReadProgress }
  | { kind: 'done'; name: string; bytes: Uint8Array; outcome: ReadOutcome };

/** Choose the signer's key list (JWKS) so `trusted` can be judged; the choice lives in the page URL. */
function TrustForm({ onKeys }: { onKeys: (keys: Jwk[] | null, url: string | null) => void }) {
  const initial = new URLSearchParams(location.search).get('jwks') ?? '';
  const [url, setUrl] = useState(initial);
  const [status, setStatus] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const load = useCallback(
    async (value: string) => {
      if (!value) {
        onKeys(null, null);
        setStatus(null);
        return;
      }
      try {
        const keys = await fetchJwks(value);
        onKeys(keys, value);
        setStatus({ kind: 'ok', text: `${keys.length} key${keys.length === 1 ? '' : 's'} loaded from this list.` });
      } catch (error) {
        onKeys(null, null);
        setStatus({ kind: 'error', text: `The key list could not be used: ${(error as Error).message}.` });
      }
    },
    [onKeys],
  );
  useEffect(() => {
    if (initial) void load(initial);
  }, [initial, load]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = url.trim();
    let absolute: string;
    try {
      absolute = value ? new URL(value, location.href).href : '';
    } catch {
      setStatus({ kind: 'error', text: 'That is not a web address.' });
      return;
    }
    if (absolute && !allowedByPolicy(absolute)) {
      // One page load: the service adds exactly this origin to what the page may connect to.
      const next = new URL(location.href);
      next.searchParams.set('jwks', absolute);
      location.assign(next.href);
      return;
    }
    void load(absolute);
  };
  return (
    <form className="trust-form" onSubmit={submit}>
      <label htmlFor="jwks-url">Signer&apos;s published keys (JWKS address)</label>
      <p className="hint" id="jwks-hint">
        To confirm who signed, give the address where the signer publishes its keys. For files signed by this service:{' '}
        <code>/.well-known/sdf-keys/</code> followed by the organisation&apos;s short name.
      </p>
      <div className="inline-form">
        <input
          id="jwks-url"
          type="text"
          inputMode="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-describedby="jwks-hint"
          placeholder="https://issuer.example/.well-known/sdf-keys/acme"
          autoComplete="off"
        />
        <button type="submit" className="secondary">
          Use these keys
        </button>
      </div>
      {status && (
        <p className={`notice ${status.kind === 'error' ? 'error' : 'ok'}`} role="status" data-testid="trust-status">
          {status.text}
        </p>
      )}
    </form>
  );
}

/** The reader: an SDF file opened and judged in this browser by the format core; it is never uploaded. */
export function ReaderPage() {
  const [state, setState] = useState<State>({ kind: 'idle' });
  const [dragging, setDragging] = useState(false);
  const keysRef = useRef<Jwk[] | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const busy = state.kind === 'working';

  const judge = useCallback(async (name: string, bytes: Uint8Array) => {
    setState({ kind: 'working', name, size: bytes.length, progress: { phase: 'checking', stage: 'container' } });
    const outcome = await readArchive(bytes, {
      trustedKeys: keysRef.current ?? undefined,
      onProgress: (progress) => setState({ kind: 'working', name, size: bytes.length, progress }),
    });
    setState({ kind: 'done', name, bytes, outcome });
  }, []);

  const open = useCallback(
    async (file: File) => {
      setState({
        kind: 'working',
        name: file.name,
        size: file.size,
        progress: { phase: 'loading', loaded: 0, total: file.size },
      });
      const bytes = await loadFile(file, (loaded, total) =>
        setState({ kind: 'working', name: file.name, size: file.size, progress: { phase: 'loading', loaded, total } }),
      );
      await judge(file.name, bytes);
    },
    [judge],
  );

  const onKeys = useCallback(
    (keys: Jwk[] | null) => {
      keysRef.current = keys;
      // A file already open is judged again against the new keys.
      setState((current) => {
        if (current.kind === 'done') void judge(current.name, current.bytes);
        return current;
      });
    },
    [judge],
  );

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const file = event.dataTransfer.files[0];
    if (file && !busy) void open(file);
  };

  return (
    <section className="reader">
      <h1 tabIndex={-1}>Read an SDF file</h1>
      <p className="lead">
        See the document, its data, and whether it is valid and who signed it. The file is checked here, in your
        browser, by the same code the service uses; it is never uploaded.
      </p>
      <div
        className={`drop-zone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        data-testid="drop-zone"
      >
        <p>
          <strong>Drop an .sdf file here</strong> or
        </p>
        <label className="button" htmlFor="sdf-file">
          Choose a file
        </label>
        <input
          ref={inputRef}
          id="sdf-file"
          className="visually-hidden"
          type="file"
          accept=".sdf,application/zip,application/vnd.sdf+zip"
          disabled={busy}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void open(file);
            event.target.value = '';
          }}
        />
      </div>
      {state.kind === 'working' && (
        <div className="progress-block" role="status" aria-live="polite" data-testid="reader-progress">
          <p>
            <strong>{state.name}</strong> ({formatBytes(state.size)}):{' '}
            {state.progress.phase === 'loading' ? 'reading the file' : STAGE_LABELS[state.progress.stage]}…
          </p>
          {state.progress.phase === 'loading' ? (
            <progress max={state.progress.total || 1} value={state.progress.loaded} aria-label="Reading the file" />
          ) : (
            <progress aria-label="Checking the file" />
          )}
        </div>
      )}
      {state.kind === 'done' && (
        <div
          data-testid="reader-result"
          data-file={state.name}
          data-elapsed-ms={state.outcome.elapsedMs.toFixed(1)}
          data-worker-ms={state.outcome.workerMs?.toFixed(1)}
        >
          <p className="file-line">
            <strong>{state.name}</strong>{' '}
            <span className="muted">
              ({formatBytes(state.bytes.length)}, checked in {Math.round(state.outcome.elapsedMs)} ms)
            </span>
          </p>
          <OutcomeView outcome={state.outcome} fileName={state.name} />
        </div>
      )}
      <details className="trust-details" open={new URLSearchParams(location.search).has('jwks') || undefined}>
        <summary>Confirm who signed: use the signer&apos;s published keys</summary>
        <TrustForm onKeys={onKeys} />
      </details>
    </section>
  );
}
