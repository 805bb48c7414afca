import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN, apiKeyMatches, hashApiKey, mintApiKey } from './api-key-format.js';

describe('API key format (S6)', () => {
  it('mints sdf_k + 43 base64url characters with an 8-character prefix', () => {
    const minted = mintApiKey();
    expect(minted.key).toMatch(API_KEY_PATTERN);
    expect(minted.prefix).toBe(minted.key.slice(0, 8));
    expect(minted.hash).toBe(hashApiKey(minted.salt, minted.key));
    expect(minted.hash).not.toContain(minted.key);
  });

  it('salts every key differently and matches only the right key', () => {
    const a = mintApiKey();
    const b = mintApiKey();
    expect(a.salt).not.toBe(b.salt);
    expect(apiKeyMatches(a.key, a.salt, a.hash)).toBe(true);
    expect(apiKeyMatches(b.key, a.salt, a.hash)).toBe(false);
    expect(apiKeyMatches(a.key, b.salt, a.hash)).toBe(false);
  });
});
