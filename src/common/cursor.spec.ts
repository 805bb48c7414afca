import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';

describe('keyset cursor (S4)', () => {
  const position = { createdAt: new Date('2026-03-15T13:30:00.123Z'), id: '6f1c1c0e-7d2a-4c55-9a57-0c1b1f0e2a11' };

  it('round-trips a position', () => {
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  it.each([
    ['empty', ''],
    ['not base64url', 'abc$%'],
    ['not JSON', b64('hello')],
    ['an array', b64([1, 2])],
    ['a missing id', b64({ t: '2026-03-15T13:30:00.123Z' })],
    ['an extra key', b64({ t: '2026-03-15T13:30:00.123Z', id: position.id, x: 1 })],
    ['a bad id', b64({ t: '2026-03-15T13:30:00.123Z', id: 'nope' })],
    ['a bad time', b64({ t: '2026-02-30T13:30:00.123Z', id: position.id })],
    ['a time without ms', b64({ t: '2026-03-15T13:30:00Z', id: position.id })],
    ['an SQL payload', b64({ t: "2026-03-15T13:30:00.123Z' OR 1=1 --", id: position.id })],
    ['too long', 'A'.repeat(500)],
  ])('rejects %s with 400 VALIDATION_ERROR', (_name, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ status: 400, code: 'VALIDATION_ERROR' }));
  });
});
