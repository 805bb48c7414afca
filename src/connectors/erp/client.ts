import { createHash } from 'node:crypto';
import type { Credentials, OAuth2Credentials } from '../credentials.js';
import {
  ErpHttpError,
  expectOk,
  resilient,
  sendOnce,
  type ErpResponse,
  type HttpRequest,
  type TransportOptions,
} from './http.js';

/** Renew this long before the token's stated expiry, so a token never expires in flight. */
const TOKEN_EXPIRY_MARGIN_MS = 30_000;

interface CachedToken {
  token: string;
  expiresAt: number;
}

/**
 * C2: OAuth2 client-credentials tokens cached per connector until shortly before expiry, with one
 * token request in flight per connector at a time (concurrent callers share it). Keyed by the
 * connector and a digest of its credentials, so changed credentials never reuse an old token.
 */
export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();

  async get(key: string, fetchToken: () => Promise<CachedToken>): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = fetchToken().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const fresh = await pending;
    this.tokens.set(key, fresh);
    return fresh.token;
  }

  /** Drops a token the ERP refused; only if it is still the one cached (a newer one stays). */
  invalidate(key: string, token: string): void {
    if (this.tokens.get(key)?.token === token) this.tokens.delete(key);
  }
}

export interface ErpCall {
  method: 'GET' | 'POST';
  /** Path under the connector's base URL, query included, already escaped. */
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** One connector's authenticated access to its ERP (per request; holds no state but the shared cache). */
export class ErpClient {
  private readonly tokenKey: string;

  constructor(
    private readonly connectorId: string,
    private readonly baseUrl: string,
    private readonly credentials: Credentials,
    readonly transport: TransportOptions,
    private readonly tokens: TokenCache,
  ) {
    this.tokenKey = `${connectorId}:${createHash('sha256').update(JSON.stringify(credentials)).digest('hex')}`;
  }

  url(path: string): URL {
    const base = this.baseUrl.endsWith('/') ? this.baseUrl.slice(0, -1) : this.baseUrl;
    return new URL(base + path);
  }

  /** One authenticated attempt (no retries); a 401 on an OAuth2 token renews it once and asks again. */
  async once(call: ErpCall, signal: AbortSignal): Promise<ErpResponse> {
    const request = (auth: string): HttpRequest => ({
      method: call.method,
      url: this.url(call.path),
      headers: { ...call.headers, Authorization: auth },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    });
    const auth = await this.authorization(signal);
    const res = await sendOnce(request(auth), this.transport, signal);
    if (res.status === 401 && this.credentials.auth_type === 'oauth2') {
      this.tokens.invalidate(this.tokenKey, auth.slice('Bearer '.length));
      return sendOnce(request(await this.authorization(signal)), this.transport, signal);
    }
    return res;
  }

  /** A read with the retry policy: the body as JSON. */
  async getJson<T>(path: string, headers: Record<string, string> = {}): Promise<T> {
    return resilient(this.transport, async (signal) => {
      const res = expectOk(await this.once({ method: 'GET', path, headers }, signal));
      return JSON.parse(res.body) as T;
    });
  }

  private async authorization(signal: AbortSignal): Promise<string> {
    const c = this.credentials;
    switch (c.auth_type) {
      case 'basic':
        return 'Basic ' + Buffer.from(`${c.username}:${c.password}`, 'utf8').toString('base64');
      case 'bearer':
        return `Bearer ${c.token}`;
      case 'oauth2':
        return `Bearer ${await this.tokens.get(this.tokenKey, () => this.requestToken(c, signal))}`;
    }
  }

  /** RFC 6749 4.4: client credentials, the client authenticated with HTTP Basic (2.3.1). */
  private async requestToken(c: OAuth2Credentials, signal: AbortSignal): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (c.scope) form.set('scope', c.scope);
    const basic = Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret)}`).toString(
      'base64',
    );
    const res = await sendOnce(
      {
        method: 'POST',
        url: new URL(c.token_url),
        headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      },
      this.transport,
      signal,
    );
    expectOk(res);
    const parsed = JSON.parse(res.body) as { access_token?: unknown; expires_in?: unknown };
    if (typeof parsed.access_token !== 'string' || !parsed.access_token) {
      throw new ErpHttpError(502, 'token endpoint answered without an access_token', null);
    }
    const lifetimeMs =
      (typeof parsed.expires_in === 'number' ? parsed.expires_in : Number(parsed.expires_in ?? 3600)) * 1000;
    // A short-lived token is kept for half its life rather than not at all.
    const margin = Math.min(TOKEN_EXPIRY_MARGIN_MS, lifetimeMs / 2);
    return { token: parsed.access_token, expiresAt: Date.now() + lifetimeMs - margin };
  }
}
