import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import {
  DelegateBackoff,
  handleWhen,
  retry,
  timeout,
  TaskCancelledError,
  TimeoutStrategy,
  wrap,
  type IRetryBackoffContext,
} from 'cockatiel';
import { oneShotAgent, TargetRefusedError, type PrivateTargets, type WebhookResolver } from '../../webhooks/ssrf.js';

/** Largest ERP answer read; a bigger one is cut (a purchase order is kilobytes). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** A Retry-After beyond this is not waited out in-line; the job's own backoff takes over. */
const MAX_RETRY_AFTER_MS = 120_000;

export interface ErpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'HEAD';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
}

/** How the connection is made: the managed deployment's address guard, and the per-attempt time-out. */
export interface TransportOptions {
  timeoutMs: number;
  retryAttempts: number;
  retryBaseDelayMs: number;
  guard: boolean;
  resolver: WebhookResolver;
  /** The operator's exception to the guard for this tenant's connectors. */
  allowed?: PrivateTargets;
}

/** An ERP answer that is not a success, with the ERP's own message. */
export class ErpHttpError extends Error {
  constructor(
    readonly status: number,
    readonly erpMessage: string,
    readonly retryAfterMs: number | null,
    readonly headers: IncomingHttpHeaders = {},
  ) {
    super(`HTTP ${status}: ${erpMessage}`);
    this.name = 'ErpHttpError';
  }

  /** C2: 429 and 5xx are worth asking again; any other 4xx will answer the same. */
  get transient(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

/** Seconds or an HTTP date (RFC 9110 Retry-After); null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim()) * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The ERP's own words from its error body: SAP OData `error.message.value`, Oracle `detail`/`title`. */
export function erpMessageOf(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const odata = (parsed.error as { message?: { value?: unknown } | string } | undefined)?.message;
    if (typeof odata === 'string') return odata;
    if (odata && typeof odata.value === 'string') return odata.value;
    const details = parsed['o:errorDetails'];
    if (Array.isArray(details) && typeof (details[0] as { detail?: unknown })?.detail === 'string') {
      return (details[0] as { detail: string }).detail;
    }
    if (typeof parsed.detail === 'string') return parsed.detail;
    if (typeof parsed.title === 'string') return parsed.title;
    if (typeof parsed.error_description === 'string') return parsed.error_description;
  } catch {
    // not JSON: the text itself (bounded) is the message
  }
  const text = body.trim().slice(0, 500);
  return text || `HTTP ${status}`;
}

/** A network failure, a time-out or a transient HTTP status: asking again may help. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ErpHttpError) return err.transient;
  if (err instanceof TargetRefusedError) return false;
  if (err instanceof TaskCancelledError) return true;
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(E[A-Z]+|UND_ERR.*)$/.test(code);
}

/**
 * One HTTP exchange. Redirects are never followed (a 3xx is an error), so an ERP cannot send our
 * credentials to another host. With the guard on, the connection goes through the webhook address
 * guard (S10), so the address checked is the address connected to. `signal` cuts the exchange.
 */
export function sendOnce(
  req: HttpRequest,
  options: { guard: boolean; resolver: WebhookResolver; allowed?: PrivateTargets },
  signal?: AbortSignal,
) {
  const url = req.url;
  const { agent, secure } = oneShotAgent(url, options);
  const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
  return new Promise<ErpResponse>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      agent.destroy();
      fn();
    };
    const request = (secure ? https.request : http.request)(url, {
      method: req.method,
      agent,
      headers: {
        Accept: 'application/json',
        'User-Agent': 'sdf-connectors/1',
        ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}),
        ...req.headers,
      },
    });
    const onAbort = () => {
      const err = new TaskCancelledError('ERP call cut at the time-out');
      finish(() => reject(err));
      request.destroy(err);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) {
          res.destroy();
          finish(() => reject(new Error(`ERP answer larger than ${MAX_RESPONSE_BYTES} bytes`)));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () =>
        finish(() =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        ),
      );
      res.on('error', (err) => finish(() => reject(err)));
    });
    request.on('error', (err) => finish(() => reject(err)));
    request.end(body);
  });
}

/** A response outside 2xx as an ErpHttpError (with Retry-After when the ERP sent one). */
export function expectOk(res: ErpResponse): ErpResponse {
  if (res.status >= 200 && res.status < 300) return res;
  throw new ErpHttpError(
    res.status,
    erpMessageOf(res.body, res.status),
    parseRetryAfter(res.headers['retry-after']),
    res.headers,
  );
}

/**
 * C2: each attempt is cut at the time-out (30 s by default); 429, 5xx, time-outs and connection
 * errors are tried again with exponential backoff, a 429's or 503's Retry-After being the least
 * that is waited; other 4xx are not. The whole `fn` is one attempt, so a write retried after an
 * unclear failure starts again with its lookup (exactly once in the ERP).
 */
export function resilient<T>(options: TransportOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const backoff = new DelegateBackoff<IRetryBackoffContext<unknown>>((ctx) => {
    const exponential = options.retryBaseDelayMs * 2 ** (ctx.attempt - 1);
    const err = 'error' in ctx.result ? ctx.result.error : undefined;
    const retryAfter = err instanceof ErpHttpError ? (err.retryAfterMs ?? 0) : 0;
    return Math.max(exponential, retryAfter);
  });
  const retryPolicy = retry(
    handleWhen(
      (err) => isTransient(err) && !(err instanceof ErpHttpError && (err.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS),
    ),
    { maxAttempts: Math.max(0, options.retryAttempts - 1), backoff },
  );
  const perAttempt = timeout(options.timeoutMs, TimeoutStrategy.Aggressive);
  return wrap(retryPolicy, perAttempt).execute(({ signal }) => fn(signal));
}
