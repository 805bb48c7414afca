import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { oneShotAgent, type WebhookResolver } from './ssrf.js';

/** SDF-SPEC Events: `sha256=<lowercase hex HMAC-SHA256 of the raw body bytes>`, keyed with the secret. */
export function signatureHeader(secret: string, body: string | Buffer): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The exact bytes that are signed and sent. */
  body: string;
  event: string;
  deliveryId: string;
}

export interface DeliveryOptions {
  timeoutMs: number;
  /** S10: refuse loopback, private, link-local, metadata and other non-public targets. */
  guard: boolean;
  resolver: WebhookResolver;
}

export type DeliveryOutcome = { ok: true; status: number } | { ok: false; status?: number; reason: string };

/**
 * One POST of one delivery. Success is a 2xx within the time-out (SDF-SPEC Events); redirects are
 * never followed (a 3xx is a failure: following one would let a receiver point us anywhere). The
 * whole exchange, connect included, is cut at `timeoutMs`. With the guard on, connections go through
 * a lookup that refuses blocked addresses, so the address checked is the one connected to.
 * Network and guard failures reject; HTTP answers resolve.
 */
export async function deliver(req: DeliveryRequest, options: DeliveryOptions): Promise<DeliveryOutcome> {
  const url = new URL(req.url);
  const { agent, secure } = oneShotAgent(url, options);
  const body = Buffer.from(req.body, 'utf8');
  const send = secure ? https.request : http.request;

  return new Promise<DeliveryOutcome>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      agent.destroy();
      fn();
    };
    const request = send(url, {
      method: 'POST',
      agent,
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
        'User-Agent': 'sdf-webhooks/1',
        'X-SDF-Signature': signatureHeader(req.secret, body),
        'X-SDF-Event': req.event,
        'X-SDF-Delivery': req.deliveryId,
      },
    });
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${options.timeoutMs} ms`);
      finish(() => reject(err));
      request.destroy(err);
    }, options.timeoutMs);
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      // The answer's body carries nothing we use; drain it so the socket can close.
      res.resume();
      finish(() =>
        resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, reason: `HTTP ${status}` }),
      );
    });
    request.on('error', (err) => finish(() => reject(err)));
    request.end(body);
  });
}
