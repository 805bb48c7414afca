import iso4217 from './iso4217.json' with { type: 'json' };
import { SdfError, pointerToken, type SdfErrorDetail } from '../errors.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { tooDeep } from './json-shape.js';

/** F5: keys that belong to meta.json or are reserved by SDF_FORMAT 4.4.1. */
export const RESERVED_DATA_KEYS = ['sdf_version', 'document_id', 'issued_at', '_sdf', '_meta', '_signature'] as const;
const RESERVED = new Set<string>(RESERVED_DATA_KEYS);
const CURRENCIES: ReadonlySet<string> = new Set(iso4217.codes);
const AMOUNT = /^-?\d+(\.\d+)?$/;
const MAX_DETAILS = 100;

export function isIso4217(code: string): boolean {
  return CURRENCIES.has(code);
}

/** Parses data.json; invalid JSON is a schema mismatch (the data cannot satisfy any schema). */
export function parseData(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    const message = `data.json is not valid JSON: ${(error as Error).message}`;
    throw new SdfError('SDF_ERROR_SCHEMA_MISMATCH', message, 'data.json', [{ path: '', message }]);
  }
}

/**
 * F5: format rules a schema cannot be trusted to enforce: root object, reserved keys, and money
 * (any object with both `amount` and `currency`). Walks iteratively so deep nesting cannot overflow the
 * stack, and refuses nesting deeper than `maxDepth` (F2; see needsShapeCheck) before anything else.
 */
export function checkDataRules(data: unknown, maxDepth: number = DEFAULT_LIMITS.maxJsonDepth): void {
  const details: SdfErrorDetail[] = [];
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    details.push({ path: '', message: 'the root of data.json must be an object' });
  } else {
    for (const key of Object.keys(data)) {
      if (RESERVED.has(key)) {
        details.push({
          path: `/${pointerToken(key)}`,
          message: `${key} is reserved; SDF metadata belongs in meta.json (rule 5)`,
        });
      }
    }
  }
  if (typeof data !== 'object' || data === null) throw dataError(details);
  // A first walk keeps no paths (most files break no rule); only when money breaks one does the walk
  // below run again, keeping the chain of parents that a JSON pointer is built from.
  if (cleanWalk(data, maxDepth) && details.length === 0) return;
  const stack: Frame[] = [{ value: data, depth: 1 }];
  while (stack.length > 0 && details.length < MAX_DETAILS) {
    const frame = stack.pop()!;
    const value = frame.value;
    const depth = frame.depth + 1;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        const child: unknown = value[i];
        if (typeof child !== 'object' || child === null) continue;
        if (depth > maxDepth) throw tooDeep('data.json', maxDepth, 'SDF_ERROR_INVALID_DATA');
        stack.push({ value: child, parent: frame, key: i, depth });
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    if ('amount' in record && 'currency' in record) checkMoney(record, frame, details);
    for (const key in record) {
      const child = record[key];
      if (typeof child !== 'object' || child === null) continue;
      if (depth > maxDepth) throw tooDeep('data.json', maxDepth, 'SDF_ERROR_INVALID_DATA');
      stack.push({ value: child, parent: frame, key, depth });
    }
  }
  throw dataError(details);
}

function dataError(details: SdfErrorDetail[]): SdfError {
  return new SdfError(
    'SDF_ERROR_INVALID_DATA',
    `data.json breaks a format rule: ${details[0]!.message}`,
    'data.json',
    details,
  );
}

/**
 * The money and depth rules in the order of the walk in checkDataRules, without building frames:
 * false at the first money that breaks a rule, an error at nesting deeper than `maxDepth`.
 */
function cleanWalk(root: object, maxDepth: number): boolean {
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop()!;
    const depth = depths.pop()! + 1;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        const child: unknown = value[i];
        if (typeof child !== 'object' || child === null) continue;
        if (depth > maxDepth) throw tooDeep('data.json', maxDepth, 'SDF_ERROR_INVALID_DATA');
        values.push(child);
        depths.push(depth);
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    if ('amount' in record && 'currency' in record && !moneyOk(record)) return false;
    for (const key in record) {
      const child = record[key];
      if (typeof child !== 'object' || child === null) continue;
      if (depth > maxDepth) throw tooDeep('data.json', maxDepth, 'SDF_ERROR_INVALID_DATA');
      values.push(child);
      depths.push(depth);
    }
  }
  return true;
}

function moneyOk({ amount, currency }: Record<string, unknown>): boolean {
  return typeof amount === 'string' && AMOUNT.test(amount) && typeof currency === 'string' && CURRENCIES.has(currency);
}

interface Frame {
  value: object;
  /** Nesting level: the root container is 1. */
  depth: number;
  parent?: Frame;
  key?: string | number;
}

/** The JSON pointer of a frame, from its chain of parents. */
function pathOf(frame: Frame): string {
  const tokens: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) tokens.push(pointerToken(f.key!));
  return tokens.length === 0 ? '' : `/${tokens.reverse().join('/')}`;
}

function checkMoney(money: Record<string, unknown>, frame: Frame, details: SdfErrorDetail[]): void {
  if (moneyOk(money)) return;
  const { amount, currency } = money;
  const path = pathOf(frame);
  if (typeof amount !== 'string') {
    details.push({
      path: `${path}/amount`,
      message: 'a monetary amount must be a string, never a JSON number (rule 8)',
    });
  } else if (!AMOUNT.test(amount)) {
    details.push({ path: `${path}/amount`, message: `amount "${amount.slice(0, 40)}" is not a decimal string` });
  }
  if (typeof currency !== 'string' || !CURRENCIES.has(currency)) {
    const shown = typeof currency === 'string' ? currency.slice(0, 40) : typeof currency;
    details.push({ path: `${path}/currency`, message: `currency ${shown} is not an ISO 4217 code (rule 8)` });
  }
}
