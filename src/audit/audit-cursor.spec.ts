import { describe, expect, it } from 'vitest';
import { AppError } from '../common/errors.js';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor.js';

const SECRET = 'x'.repeat(32);
const position = { micros: '1764000000123456', id: '3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b' };

describe('audit cursor (M4)', () => {
  it('round-trips a position', () => {
    expect(decodeAuditCursor(SECRET, encodeAuditCursor(SECRET, position))).toEqual(position);
  });

  it('refuses a tampered, foreign or malformed cursor with 400', () => {
    const cursor = encodeAuditCursor(SECRET, position);
    const [payload, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ u: '1764000000999999', id: position.id })).toString('base64url');
    for (const bad of [
      `${forged}.${mac}`,
      `${payload}.${mac.slice(0, -1)}A`,
      encodeAuditCursor('y'.repeat(32), position),
      payload,
      'garbage',
      `${cursor}.x`,
    ]) {
      expect(() => decodeAuditCursor(SECRET, bad), bad).toThrow(AppError);
    }
  });
});
