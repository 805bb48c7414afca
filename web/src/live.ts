/**
 * The service's event stream (`GET /events`, Server-Sent Events) as the pages follow it: one stream per
 * tab, opened with the same credential as every other call (so with fetch and the Authorization header,
 * not EventSource, which cannot send one), reconnected with a growing delay and resumed exactly after the
 * last event seen (`Last-Event-ID`). No React here: `use-live.ts` ties it to the pages' queries.
 */

import { SseParser, type SseMessage } from '../../src/events/sse.js';

export { SseParser, type SseMessage };

/** `open`: a stream is open; `connecting`: the first attempt or a reconnection after a drop; `down`: it cannot open. */
export type LiveStatus = 'connecting' | 'open' | 'down';

export interface LiveStreamOptions {
  /** Opens the stream, sending `lastEventId` as `Last-Event-ID` when there is one. */
  open(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
  onMessage(message: SseMessage): void;
  /** Each change; `down` after every refused attempt, with the wait before the next one. */
  onStatus?(status: LiveStatus, info: { resumed: boolean; retryInMs?: number }): void;
  /** Delay before attempt `n` (0 after a drop); the server's `retry` or `Retry-After` raise it. */
  delayMs?(attempt: number): number;
  /** A stream silent this long (no event, no heartbeat) is taken for dead and opened again. */
  silenceMs?: number;
  /** An attempt that has no answer by then is given up (and counts as a refusal). */
  connectTimeoutMs?: number;
}

/** 1 s, 2 s, 4 s ... up to 30 s, each within ±20 % so that the tabs of a restarted server do not return together. */
export function backoffMs(attempt: number): number {
  const base = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** Rejects when the signal aborts; resolves after `ms` otherwise. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('stopped'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('stopped'));
      },
      { once: true },
    );
  });
}

/**
 * One stream kept open: after a drop it opens again with `Last-Event-ID` (the server resumes exactly after
 * that event, or says `stream.restarted`), after a refusal it waits longer each time (honouring
 * `Retry-After`). `stop()` ends it for good.
 */
export class LiveStream {
  private readonly controller = new AbortController();
  private lastEventId: string | undefined;
  private serverRetryMs = 0;
  private status: LiveStatus | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: LiveStreamOptions) {}

  /** The id of the last event delivered. */
  get lastId(): string | undefined {
    return this.lastEventId;
  }

  start(): void {
    this.running ??= this.run().catch(() => undefined);
  }

  stop(): Promise<void> {
    this.controller.abort();
    return this.running ?? Promise.resolve();
  }

  private setStatus(status: LiveStatus, info: { resumed: boolean; retryInMs?: number } = { resumed: false }): void {
    if (status === this.status && status === 'connecting') return;
    this.status = status;
    this.options.onStatus?.(status, info);
  }

  private async run(): Promise<void> {
    const delay = this.options.delayMs ?? backoffMs;
    const signal = this.controller.signal;
    let failures = 0;
    this.setStatus('connecting');
    while (!signal.aborted) {
      let waitMs: number;
      const attempt = new AbortController();
      const stopAttempt = () => attempt.abort();
      signal.addEventListener('abort', stopAttempt, { once: true });
      try {
        const outcome = await this.attempt(attempt);
        if (outcome.kind === 'dropped') {
          // It was open: try again at once (after the server's `retry`), then back off if that fails.
          failures = 0;
          this.setStatus('connecting');
          waitMs = Math.max(this.serverRetryMs, delay(0));
        } else {
          failures += 1;
          waitMs = Math.max(outcome.retryAfterMs, this.serverRetryMs, delay(failures));
          this.setStatus('down', { resumed: false, retryInMs: waitMs });
        }
      } finally {
        signal.removeEventListener('abort', stopAttempt);
      }
      await sleep(waitMs, signal).catch(() => undefined);
    }
  }

  /** One connection, to its end: `dropped` if it was open, `refused` if it never opened. */
  private async attempt(
    attempt: AbortController,
  ): Promise<{ kind: 'dropped' } | { kind: 'refused'; retryAfterMs: number }> {
    let response: Response;
    const resumed = this.lastEventId !== undefined;
    const connectTimer = setTimeout(() => attempt.abort(), this.options.connectTimeoutMs ?? 10_000);
    try {
      response = await this.options.open(this.lastEventId, attempt.signal);
    } catch {
      return { kind: 'refused', retryAfterMs: 0 };
    } finally {
      clearTimeout(connectTimer);
    }
    const type = response.headers.get('Content-Type') ?? '';
    if (!response.ok || !response.body || !type.startsWith('text/event-stream')) {
      await response.body?.cancel().catch(() => undefined);
      const retry = Number(response.headers.get('Retry-After'));
      return { kind: 'refused', retryAfterMs: Number.isFinite(retry) && retry > 0 ? retry * 1000 : 0 };
    }
    this.setStatus('open', { resumed });
    const silenceMs = this.options.silenceMs ?? 45_000;
    let silence: ReturnType<typeof setTimeout> | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => attempt.abort(), silenceMs);
    };
    const parser = new SseParser({
      onMessage: (message) => {
        if (message.id !== undefined) this.lastEventId = message.id;
        this.options.onMessage(message);
      },
      onRetry: (ms) => {
        this.serverRetryMs = Math.min(ms, 60_000);
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    heard();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        heard();
        parser.push(value);
      }
    } catch {
      // A dropped connection, a stop, or silence: the same way back.
    } finally {
      clearTimeout(silence);
      reader.cancel().catch(() => undefined);
    }
    return { kind: 'dropped' };
  }
}

/** The record id an event concerns (the webhook body's `data.id`), if it names one. */
export function documentIdOf(message: SseMessage): string | undefined {
  try {
    const body = JSON.parse(message.data) as { data?: { id?: unknown } } | null;
    return typeof body?.data?.id === 'string' ? body.data.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pages' queries an event makes stale. A document's change (uploaded, validated, signed, deleted): its
 * record (status, signature), the documents list and its badges, the period's usage. A signing that failed
 * changes the record alone (its `signing_error`); a finished ERP push, the document's pushes alone.
 * `stream.restarted` (events may have been missed): every one of them.
 */
export function staleQueries(message: SseMessage): (readonly unknown[])[] {
  if (message.event === 'stream.restarted') return [['document'], ['documents'], ['erp-status'], ['usage']];
  if (!message.event.startsWith('document.')) return [];
  const id = documentIdOf(message);
  if (message.event === 'document.signing_failed') return id ? [['document', id]] : [];
  if (message.event === 'document.erp_pushed') return id ? [['erp-status', id]] : [];
  const keys: (readonly unknown[])[] = [['documents'], ['usage']];
  // An upload's own record is already in the uploader's hands (the upload's answer): its next change is news.
  if (id && message.event !== 'document.uploaded') keys.push(['document', id]);
  return keys;
}
