import { describe, expect, it } from 'vitest';
import { TokenCache } from './client.js';
import { ErpHttpError, erpMessageOf, isTransient, parseRetryAfter } from './http.js';

describe('ERP answers', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter(undefined)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it("takes the ERP's own message from SAP OData and Oracle error bodies", () => {
    expect(
      erpMessageOf(JSON.stringify({ error: { code: 'X', message: { lang: 'en', value: 'Period closed' } } }), 400),
    ).toBe('Period closed');
    expect(
      erpMessageOf(JSON.stringify({ title: 'Bad Request', 'o:errorDetails': [{ detail: 'No supplier' }] }), 400),
    ).toBe('No supplier');
    expect(erpMessageOf('', 503)).toBe('HTTP 503');
  });

  it('retries 429, 5xx and connection failures, not other 4xx', () => {
    expect(isTransient(new ErpHttpError(429, '', 1000))).toBe(true);
    expect(isTransient(new ErpHttpError(503, '', null))).toBe(true);
    expect(isTransient(new ErpHttpError(400, '', null))).toBe(false);
    expect(isTransient(new ErpHttpError(404, '', null))).toBe(false);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
  });
});

describe('TokenCache', () => {
  it('shares one token request among concurrent callers and reuses the token until it expires', async () => {
    const cache = new TokenCache();
    let requests = 0;
    const fetchToken = async () => {
      requests++;
      await new Promise((r) => setTimeout(r, 5));
      return { token: `t${requests}`, expiresAt: Date.now() + 60_000 };
    };
    const tokens = await Promise.all([1, 2, 3].map(() => cache.get('c', fetchToken)));
    expect(tokens).toEqual(['t1', 't1', 't1']);
    expect(await cache.get('c', fetchToken)).toBe('t1');
    cache.invalidate('c', 't1');
    expect(await cache.get('c', fetchToken)).toBe('t2');
    expect(requests).toBe(2);
  });

  it('asks again once a token has expired', async () => {
    const cache = new TokenCache();
    let n = 0;
    const fetchToken = () => Promise.resolve({ token: `t${++n}`, expiresAt: Date.now() - 1 });
    expect(await cache.get('c', fetchToken)).toBe('t1');
    expect(await cache.get('c', fetchToken)).toBe('t2');
  });
});
