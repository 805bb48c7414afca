import { AppError } from './errors.js';
import { isUuid } from './uuid.pipe.js';

/** A keyset position: the (created_at, id) of the last row of a page (S4). */
export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_CURSOR_LENGTH = 200;

/** S4: opaque to clients; inside, base64url of `{"t": <ISO ms>, "id": <uuid>}`. */
export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify({ t: position.createdAt.toISOString(), id: position.id })).toString('base64url');
}

/**
 * The object inside a cursor and its (created_at, id), or `invalid()` thrown for anything else: at most
 * `maxLength` characters of base64url holding a JSON object whose `t` is an ISO time to the millisecond
 * and whose `id` is a UUID. Each kind of cursor checks its other fields and its canonical form itself.
 */
export function readCursor(
  cursor: string,
  maxLength: number,
  invalid: () => AppError,
): { record: Record<string, unknown>; position: KeysetPosition } {
  if (cursor.length === 0 || cursor.length > maxLength || !BASE64URL.test(cursor)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid();
  const record = value as Record<string, unknown>;
  const { t, id } = record;
  if (typeof t !== 'string' || !ISO_MS.test(t) || typeof id !== 'string' || !isUuid(id)) throw invalid();
  const createdAt = new Date(t);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== t) throw invalid();
  return { record, position: { createdAt, id } };
}

/** Strict: anything but a cursor this service made is 400 (S4), never a silently different page. */
export function decodeCursor(cursor: string, param = 'cursor'): KeysetPosition {
  const invalid = () =>
    AppError.badRequest('Malformed cursor', [
      { path: `/${param}`, message: 'must be a next_cursor value from a previous page' },
    ]);
  const { record, position } = readCursor(cursor, MAX_CURSOR_LENGTH, invalid);
  const keys = Object.keys(record).sort();
  if (keys.length !== 2 || keys[0] !== 'id' || keys[1] !== 't') throw invalid();
  const { createdAt, id } = position;
  // Canonical form only: a re-encoding of the same position must give back the same string.
  if (encodeCursor({ createdAt, id }) !== cursor) throw invalid();
  return { createdAt, id: id.toLowerCase() };
}
