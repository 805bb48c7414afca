import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventPayload } from '../../src/events/events.js';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** The raw request body, exactly as received (what the signature covers). */
  raw: Buffer;
  /** `Date.now()` when the request was complete. */
  at: number;
  /** Parsed `raw` (an S10 payload when the sender is right), for reading fields after verification. */
  json: EventPayload;
}

/** What to do with the n-th request (0-based): answer with a status, or never answer at all. */
export type ReceiverBehaviour = (n: number, req: IncomingMessage) => number | 'hang';

/**
 * A real HTTP receiver on loopback, standing in for a tenant's system (STYLE: external services are
 * small real servers). Records every request; `behaviour` decides the answer.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  /** Requests whose connection the sender closed before we answered (a cut time-out). */
  abortedByClient = 0;
  behaviour: ReceiverBehaviour = () => 200;
  private readonly server: http.Server;
  private readonly waiters: { count: number; resolve: () => void }[] = [];

  private constructor() {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  static async start(behaviour?: ReceiverBehaviour): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    if (behaviour) r.behaviour = behaviour;
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The receiver's URL with 127.0.0.1, or with another host name that resolves to it. */
  url(path = '/hook', host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 15_000): Promise<ReceivedDelivery[]> {
    if (this.received.length >= count) return Promise.resolve(this.received.slice());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`receiver got ${this.received.length} of ${count} expected requests`)),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.received.slice());
        },
      });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const n = this.received.length;
      let json = {} as EventPayload;
      try {
        json = JSON.parse(raw.toString('utf8')) as EventPayload;
      } catch {
        // Recorded as is; the test's assertions on the body will say what was wrong.
      }
      this.received.push({ headers: req.headers, raw, at: Date.now(), json });
      const answer = this.behaviour(n, req);
      if (answer === 'hang') {
        res.on('close', () => {
          if (!res.writableEnded) this.abortedByClient++;
        });
      } else {
        res.writeHead(answer, answer >= 300 && answer < 400 ? { Location: '/elsewhere' } : {}).end('ok');
      }
      for (const w of this.waiters.filter((x) => this.received.length >= x.count)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  }
}

/** How a receiver verifies a delivery (docs/webhooks.md): HMAC over the raw bytes, timing-safe. */
export function verifySignature(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'), 'utf8');
  const given = Buffer.from(header.slice('sha256='.length), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
