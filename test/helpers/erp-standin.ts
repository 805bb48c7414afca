import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TlsIdentity } from './tls.js';

/** One request as the stand-in saw it (`at`: its own clock, for "waited at least" checks). */
export interface SeenRequest {
  method: string;
  path: string;
  /** The raw query string, percent-decoded (what the ERP would parse). */
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What an injected fault does to a request it matches. */
export type Fault =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { hang: true }
  /** Process the request (the ERP accepts it), then never answer. */
  | { acceptThenHang: true }
  | { delayMs: number };

interface FaultRule {
  match: (req: SeenRequest) => boolean;
  faults: Fault[];
}

export type Credentials =
  | { auth_type: 'basic'; username: string; password: string }
  | { auth_type: 'bearer'; token: string }
  | { auth_type: 'oauth2'; client_id: string; client_secret: string };

/**
 * The parts both ERP stand-ins share: a real HTTP server on loopback, the request log, injected
 * faults (429, 5xx, slow, never), the three kinds of authentication and an OAuth2 token endpoint
 * (RFC 6749 client credentials, `POST /oauth/token`).
 */
export abstract class ErpStandIn {
  readonly requests: SeenRequest[] = [];
  readonly tokenRequests: SeenRequest[] = [];
  private server: http.Server | undefined;
  private readonly sockets = new Set<Socket>();
  private rules: FaultRule[] = [];
  private tokens = new Map<string, number>();
  private tokenCounter = 0;
  private secure = false;
  /** Lifetime of issued tokens (seconds). */
  tokenLifetime = 3600;
  port = 0;
  /** Called with each request once it is answered (a log of what the ERP saw). */
  onRequest: ((req: SeenRequest, status: number) => void) | undefined;

  constructor(readonly accepted: Credentials) {}

  get url(): string {
    return `${this.secure ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  get tokenUrl(): string {
    return `${this.url}/oauth/token`;
  }

  /** Listens on loopback; with `tls`, over https with that certificate. */
  async start(port = this.port, tls?: TlsIdentity): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      void this.dispatch(req, res);
    };
    this.secure = tls !== undefined;
    this.server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, handler) : http.createServer(handler);
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening and cuts open connections (hung requests included). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next requests matching `match` get these faults, one each, in order. */
  inject(match: (req: SeenRequest) => boolean, ...faults: Fault[]): void {
    this.rules.push({ match, faults: [...faults] });
  }

  clearFaults(): void {
    this.rules = [];
  }

  /** Every token issued so far stops being accepted (as when a token expires at the ERP). */
  expireTokens(): void {
    this.tokens.clear();
  }

  seen(method: string, pathPart: string): SeenRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.includes(pathPart));
  }

  protected abstract handle(req: SeenRequest, res: ServerResponse): void;
  protected abstract errorBody(status: number, message: string): { contentType: string; body: unknown };

  protected send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(text);
  }

  protected fail(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    const { contentType, body } = this.errorBody(status, message);
    this.send(res, status, body, { 'Content-Type': contentType, ...headers });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://standin');
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    };
    if (this.onRequest) res.on('finish', () => this.onRequest?.(seen, res.statusCode));
    if (seen.path === '/oauth/token') {
      this.tokenRequests.push(seen);
      return this.issueToken(seen, res);
    }
    this.requests.push(seen);
    const rule = this.rules.find((r) => r.faults.length > 0 && r.match(seen));
    const fault = rule?.faults.shift();
    if (fault && 'hang' in fault) return;
    if (fault && 'status' in fault) {
      if (fault.body !== undefined) return this.send(res, fault.status, fault.body, fault.headers);
      return this.fail(res, fault.status, `injected ${fault.status}`, fault.headers);
    }
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (!this.authenticated(seen)) return this.fail(res, 401, 'Authentication failed');
    if (fault && 'acceptThenHang' in fault) {
      // The ERP does the work; the answer never leaves (a crash or a cut line after the commit).
      this.handle(seen, { writeHead: () => undefined, end: () => undefined } as unknown as ServerResponse);
      return;
    }
    try {
      this.handle(seen, res);
    } catch (err) {
      this.fail(res, 400, (err as Error).message);
    }
  }

  private authenticated(req: SeenRequest): boolean {
    const header = req.headers.authorization ?? '';
    const a = this.accepted;
    switch (a.auth_type) {
      case 'basic':
        return header === 'Basic ' + Buffer.from(`${a.username}:${a.password}`).toString('base64');
      case 'bearer':
        return header === `Bearer ${a.token}`;
      case 'oauth2': {
        const expires = this.tokens.get(header.replace(/^Bearer /, ''));
        return expires !== undefined && expires > Date.now();
      }
    }
  }

  private issueToken(req: SeenRequest, res: ServerResponse): void {
    const a = this.accepted;
    const form = new URLSearchParams(req.body);
    const basic =
      'Basic ' + Buffer.from(a.auth_type === 'oauth2' ? `${a.client_id}:${a.client_secret}` : '').toString('base64');
    if (a.auth_type !== 'oauth2' || req.headers.authorization !== basic) {
      return this.send(res, 401, { error: 'invalid_client', error_description: 'client authentication failed' });
    }
    if (form.get('grant_type') !== 'client_credentials') {
      return this.send(res, 400, { error: 'unsupported_grant_type' });
    }
    const token = `tok-${++this.tokenCounter}-${Math.random().toString(36).slice(2)}`;
    this.tokens.set(token, Date.now() + this.tokenLifetime * 1000);
    this.send(res, 200, { access_token: token, token_type: 'Bearer', expires_in: this.tokenLifetime });
  }
}

/**
 * Parses `Field <op> 'literal' [and Field <op> 'literal']...` as an ERP would: a quote inside a literal
 * is doubled. Anything else (an injected ` or `, an unbalanced quote) is a syntax error.
 */
export function parseEqualsFilter(filter: string, op: 'eq' | '='): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  const fail = (): never => {
    throw new Error(`invalid filter at position ${i}: ${filter}`);
  };
  for (;;) {
    const field = /^[A-Za-z_][A-Za-z0-9_]*/.exec(filter.slice(i))?.[0] ?? fail();
    i += field.length;
    const sep = op === 'eq' ? ' eq ' : '=';
    if (!filter.startsWith(sep, i)) fail();
    i += sep.length;
    if (filter[i] !== "'") fail();
    i++;
    let value = '';
    for (;;) {
      if (i >= filter.length) fail();
      if (filter[i] === "'") {
        if (filter[i + 1] === "'") {
          value += "'";
          i += 2;
          continue;
        }
        i++;
        break;
      }
      value += filter[i++];
    }
    out.set(field, value);
    if (i === filter.length) return out;
    if (!filter.startsWith(' and ', i)) fail();
    i += 5;
  }
}
