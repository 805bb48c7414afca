import http from 'node:http';
import https from 'node:https';
import { oneShotAgent, type WebhookResolver } from '../webhooks/ssrf.js';

/** Metadata documents are small; a larger answer is not metadata. */
const MAX_BYTES = 1_000_000;

/**
 * GET of an IdP metadata URL. In managed mode the connection goes through the webhook address guard
 * (S10), so a tenant cannot point the service at loopback, private or metadata addresses; redirects
 * are not followed (one would lead past the guard's registration check). Rejects on any failure.
 */
export async function fetchMetadata(
  rawUrl: string,
  options: { guard: boolean; resolver: WebhookResolver; timeoutMs: number },
): Promise<string> {
  const url = new URL(rawUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('metadata URL must be http(s)');
  const { agent, secure } = oneShotAgent(url, options);
  const get = secure ? https.get : http.get;
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      agent.destroy();
      fn();
    };
    const req = get(url, { agent, headers: { Accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${options.timeoutMs} ms`);
      finish(() => reject(err));
      req.destroy(err);
    }, options.timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        finish(() => reject(new Error(`HTTP ${status}`)));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BYTES) {
          finish(() => reject(new Error(`metadata larger than ${MAX_BYTES} bytes`)));
          req.destroy();
        } else chunks.push(c);
      });
      res.on('end', () => finish(() => resolve(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', (err) => finish(() => reject(err)));
    });
    req.on('error', (err) => finish(() => reject(err)));
  });
}
