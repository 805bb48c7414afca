import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.pipe.js';

/**
 * M4 cursor: the (created_at, id) of a page's last entry, with created_at in whole microseconds (the
 * column's precision; milliseconds would skip or repeat entries written in the same millisecond),
 * signed with an HMAC so a tampered cursor is 400 rather than a silently different page.
 */
export interface AuditPosition {
  /** Microseconds since the Unix epoch, as a decimal string. */
  micros: string;
  id: string;
}

const MICROS = /^\d{1,17}$/;
const MAX_LENGTH = 300;

function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret)
    .update('audit-cursor:')
    .update(payload)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

export function encodeAuditCursor(secret: string, position: AuditPosition): string {
  const payload = Buffer.from(JSON.stringify({ u: position.micros, id: position.id })).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

export function decodeAuditCursor(secret: string, cursor: string): AuditPosition {
  const invalid = AppError.badRequest('Malformed cursor', [
    { path: '/cursor', message: 'must be a next_cursor value from a previous page' },
  ]);
  if (cursor.length > MAX_LENGTH) throw invalid;
  const [payload, mac, ...rest] = cursor.split('.');
  if (rest.length || !payload || !mac) throw invalid;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  const { u, id } = (value ?? {}) as Record<string, unknown>;
  if (typeof u !== 'string' || !MICROS.test(u) || typeof id !== 'string' || !isUuid(id)) throw invalid;
  return { micros: u, id };
}
