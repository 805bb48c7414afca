import { describe, expect, it } from 'vitest';
import { allowedReturnPath } from './return-path.js';

describe('allowedReturnPath', () => {
  const allowed = ['/app/', '/welcome'];

  it('admits an allowed path, a path under an allowed prefix and a query string', () => {
    expect(allowedReturnPath('/welcome', allowed)).toBe('/welcome');
    expect(allowedReturnPath('/app/documents/1', allowed)).toBe('/app/documents/1');
    expect(allowedReturnPath('/app/?tab=2', allowed)).toBe('/app/?tab=2');
  });

  it.each([
    ['another path', '/admin'],
    ['a prefix without its slash', '/welcomed'],
    ['a protocol-relative URL', '//evil.example/app/'],
    ['a backslash', '/\\evil.example/app/'],
    ['an absolute URL', 'https://evil.example/app/'],
    ['dot segments', '/app/../admin'],
    ['a fragment', '/app/#x'],
    ['a control character', '/app/\nx'],
    ['an empty value', ''],
  ])('refuses %s', (_name, value) => {
    expect(allowedReturnPath(value, allowed)).toBeNull();
  });

  it('refuses everything when nothing is allowed', () => {
    expect(allowedReturnPath('/welcome', [])).toBeNull();
  });
});
