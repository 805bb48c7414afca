import { useCallback, useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { formatBytes } from '../format.js';
import { loadFile, readArchive, spareBuffers, type ReadOutcome, type ReadProgress } from './engine.js';
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

/**
 * A check that takes longer than this shows its stages and a moving bar; a quicker one (most files) shows
 * "checking" alone. Labels that flash by cannot be read, and the bar's animation (a new frame drawn
 * 60 times a second) took CPU from the check itself on a 2-core machine.
 */
const SHOW_STAGES_AFTER_MS = 400;

type State =
  | { kind: 'idle' }
  | {
      kind: 'working';
      name: string;
      size: number;
      progress: ReadProgress;
      /** The check has run for SHOW_STAGES_AFTER_MS: its stage and a moving bar are shown. */
      slow?: boolean;
    }
  | {
      kind: 'done';
      name: string;
      file: Blob;
      outcome: ReadOutcome;
      trustedBy: string | null;
      /** When the file was picked (or judged again), for the time until its verdict is on screen. */
      pickedAt: number;
    };

/** Set just before the page reloads itself with a key list the person typed: that load needs no second "yes". */
const CONFIRMED_KEY = 'sdf.jwks-confirmed';

function absoluteUrl(value: string): string | null {
  try {
    return new URL(value, location.href).href;
  } catch {
    return null;
  }
}

/** The key list this page load was asked for by the person, not by whoever wrote the link. */
function confirmedOnLoad(url: string): boolean {
  try {
    const confirmed = sessionStorage.getItem(CONFIRMED_KEY);
    sessionStorage.removeItem(CONFIRMED_KEY);
    return confirmed !== null && confirmed === url;
  } catch {
    return false;
  }
}

interface Trust {
  url: string;
  setUrl(value: string): void;
  status: { kind: 'ok' | 'error'; text: string } | null;
  /** A key list named by a link, waiting for the person's yes. */
  pending: string | null;
  load(value: string): Promise<void>;
  submit(event: FormEvent): void;
}

/** Keeps the key list's address in the page address (`?jwks=`), so the page can be reloaded or shared as it is. */
function keepInAddress(value: string | null): void {
  const here = new URL(location.href);
  if (value === null) here.searchParams.delete('jwks');
  else if (here.searchParams.getAll('jwks').length === 1 && here.searchParams.get('jwks') === value) return;
  else here.searchParams.set('jwks', value);
  history.replaceState(history.state, '', here.href);
}

/**
 * The signer's key list (JWKS) chosen so `trusted` can be judged; the choice lives in the page URL. A key
 * list named by a link is fetched only after the person confirms it: whoever publishes the list decides
 * what "Trusted" means. Held by the page, so the box keeps its state wherever it is shown.
 */
function useTrust(onKeys: (keys: Jwk[] | null, url: string | null) => void): Trust {
  const [initial] = useState(() => new URLSearchParams(location.search).get('jwks') ?? '');
  const [url, setUrl] = useState(initial);
  const [status, setStatus] = useState<Trust['status']>(null);
  const [pending, setPending] = useState<string | null>(() => {
    const absolute = initial ? absoluteUrl(initial) : null;
    return absolute && !confirmedOnLoad(absolute) ? absolute : null;
  });
  const loadedOnce = useRef(false);
  const load = useCallback(
    async (value: string) => {
      loadedOnce.current = true;
      setPending(null);
      if (!value) {
        onKeys(null, null);
        setStatus(null);
        keepInAddress(null);
        return;
      }
      try {
        const keys = await fetchJwks(value);
        onKeys(keys, value);
        setUrl(value);
        keepInAddress(value);
        setStatus({
          kind: 'ok',
          text: `${keys.length} key${keys.length === 1 ? '' : 's'} loaded from ${value}.`,
        });
      } catch (error) {
        onKeys(null, null);
        setStatus({ kind: 'error', text: `The key list could not be used: ${(error as Error).message}.` });
      }
    },
    [onKeys],
  );
  useEffect(() => {
    // Only the list the person typed before the reload; a link's list waits for the button.
    if (loadedOnce.current || !initial || pending !== null) return;
    const absolute = absoluteUrl(initial);
    if (absolute) void load(absolute);
    else setStatus({ kind: 'error', text: 'That is not a web address.' });
  }, [initial, pending, load]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = url.trim();
    const absolute = value ? absoluteUrl(value) : '';
    if (absolute === null) {
      setStatus({ kind: 'error', text: 'That is not a web address.' });
      return;
    }
    if (absolute && !allowedByPolicy(absolute)) {
      // One page load: the service adds exactly this origin to what the page may connect to. The person
      // asked for it here, so the reloaded page fetches it without asking again.
      const next = new URL(location.href);
      next.searchParams.set('jwks', absolute);
      try {
        sessionStorage.setItem(CONFIRMED_KEY, absolute);
      } catch {
        // Storage refused: the reloaded page asks once more.
      }
      location.assign(next.href);
      return;
    }
    void load(absolute);
  };
  return { url, setUrl, status, pending, load, submit };
}

/** The key list box: the address of the signer's published keys, and the yes a linked list waits for. */
function TrustForm({ trust }: { trust: Trust }) {
  const { url, setUrl, status, pending, load, submit } = trust;
  const pendingOrigin = pending ? new URL(pending).origin : null;
  return (
    <form className="trust-form" onSubmit={submit} data-testid="trust-form">
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
      {pending && (
        <div className="notice warning" role="status" data-testid="trust-confirm">
          <p>
            This link names a key list at <code className="wrap">{pending}</code>. A file is shown as
            &quot;Trusted&quot; when its key is in this list, so use it only if you know who publishes it.
          </p>
          <button type="button" onClick={() => void load(pending)}>
            Fetch keys from {pendingOrigin}
          </button>
        </div>
      )}
      {status && (
        <p className={`notice ${status.kind === 'error' ? 'error' : 'ok'}`} role="status" data-testid="trust-status">
          {status.text}
        </p>
      )}
    </form>
  );
}

/** A file's progress as the page shows it (see SHOW_STAGES_AFTER_MS). */
interface ProgressShown {
  /** The file's step now; shown at once when `now` (the first, taking the previous view down) or once slow. */
  report(progress: ReadProgress, now?: boolean): void;
  end(): void;
}

/**
 * Until the file has taken SHOW_STAGES_AFTER_MS since it was picked, the page says "checking…" and draws
 * nothing more (most files are judged by then); after that, each step as it comes, with its bar.
 */
function showProgress(name: string, size: number, setState: (state: State) => void): ProgressShown {
  let latest: ReadProgress = { phase: 'loading', loaded: 0, total: size };
  let slow = false;
  const show = (): void => setState({ kind: 'working', name, size, progress: latest, slow });
  const timer = setTimeout(() => {
    slow = true;
    show();
  }, SHOW_STAGES_AFTER_MS);
  return {
    report(progress, now = false) {
      latest = progress;
      if (now || slow) show();
    },
    end: () => clearTimeout(timer),
  };
}

/** The reader: an SDF file opened and judged in this browser by the format core; it is never uploaded. */
export function ReaderPage() {
  const [state, setState] = useState<State>({ kind: 'idle' });
  const [dragging, setDragging] = useState(false);
  const keysRef = useRef<{ keys: Jwk[]; url: string } | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  /** The outcome on screen (null while a file is judged). */
  const shownOutcome = useRef<ReadOutcome | null>(null);
  const busy = state.kind === 'working';

  /** Judges bytes read from `file`; they are handed to the worker, and read again from the file to judge anew. */
  const judge = useCallback(
    async (name: string, file: Blob, bytes: Uint8Array, pickedAt: number, progress: ProgressShown) => {
      // The previous file's large buffers go to the worker, which inflates into them instead of new memory
      // (web/src/shims/spare-memory.ts); its view, the last reader of them, is taken down first (a picked
      // file's already is: the page shows its progress from the moment it is picked).
      const previous = shownOutcome.current;
      shownOutcome.current = null;
      const spare = previous ? spareBuffers(previous) : [];
      if (previous) flushSync(() => progress.report({ phase: 'checking', stage: 'container' }, true));
      const trust = keysRef.current;
      const outcome = await readArchive(bytes, {
        trustedKeys: trust?.keys,
        handOver: true,
        recycle: spare,
        onProgress: (step) => progress.report(step),
      });
      progress.end();
      shownOutcome.current = outcome;
      setState({ kind: 'done', name, file, outcome, trustedBy: trust?.url ?? null, pickedAt });
    },
    [],
  );

  const open = useCallback(
    async (file: File) => {
      const pickedAt = performance.now();
      const progress = showProgress(file.name, file.size, setState);
      progress.report({ phase: 'loading', loaded: 0, total: file.size }, true);
      const bytes = await loadFile(file, (loaded, total) => progress.report({ phase: 'loading', loaded, total }));
      await judge(file.name, file, bytes, pickedAt, progress);
    },
    [judge],
  );

  const onKeys = useCallback(
    (keys: Jwk[] | null, url: string | null) => {
      keysRef.current = keys && url ? { keys, url } : null;
      // A file already open is judged again against the new keys.
      setState((current) => {
        if (current.kind === 'done') {
          const { name, file } = current;
          const pickedAt = performance.now();
          const progress = showProgress(name, file.size, setState);
          void loadFile(file).then((bytes) => judge(name, file, bytes, pickedAt, progress));
        }
        return current;
      });
    },
    [judge],
  );
  const trust = useTrust(onKeys);
  // The time from picking the file to its verdict on screen (after the first paint that shows it), beside
  // the judging's own (data-elapsed-ms): what a person waits, which `bench:reader` reports too.
  const shownRef = useRef<HTMLDivElement>(null);
  const pickedAt = state.kind === 'done' ? state.pickedAt : null;
  useEffect(() => {
    if (pickedAt === null) return;
    const frame = requestAnimationFrame(() => {
      if (shownRef.current) shownRef.current.dataset.shownMs = (performance.now() - pickedAt).toFixed(1);
    });
    return () => cancelAnimationFrame(frame);
  }, [pickedAt]);
  // A signed file whose signature matches: the key list box belongs to its verdict, where the question
  // "whose key is this?" is asked. Otherwise it waits below, for the next file.
  const signedFile =
    state.kind === 'done' && state.outcome.result.is_signed && state.outcome.result.signature?.valid === true;

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
            {!state.slow
              ? 'checking'
              : state.progress.phase === 'loading'
                ? 'reading the file'
                : STAGE_LABELS[state.progress.stage]}
            …
          </p>
          {!state.slow ? (
            <div className="progress-space" aria-hidden="true" />
          ) : state.progress.phase === 'loading' ? (
            <progress max={state.progress.total || 1} value={state.progress.loaded} aria-label="Reading the file" />
          ) : (
            <progress aria-label="Checking the file" />
          )}
        </div>
      )}
      {state.kind === 'done' && (
        <div
          ref={shownRef}
          data-testid="reader-result"
          data-file={state.name}
          data-elapsed-ms={state.outcome.elapsedMs.toFixed(1)}
          data-worker-ms={state.outcome.workerMs?.toFixed(1)}
        >
          <p className="file-line">
            <strong>{state.name}</strong>{' '}
            <span className="muted">
              ({formatBytes(state.file.size)}, checked in {Math.round(state.outcome.elapsedMs)} ms)
            </span>
          </p>
          <OutcomeView
            outcome={state.outcome}
            fileName={state.name}
            trustedBy={state.trustedBy}
            trust={signedFile ? <TrustForm trust={trust} /> : undefined}
          />
        </div>
      )}
      {!signedFile && (
        <details className="trust-details" open={new URLSearchParams(location.search).has('jwks') || undefined}>
          <summary>Confirm who signed: use the signer&apos;s published keys</summary>
          <TrustForm trust={trust} />
        </details>
      )}
    </section>
  );
}
