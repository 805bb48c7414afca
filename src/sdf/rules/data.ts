import iso4217 from './iso4217.json' with { type: 'json' };
import { SdfError, pointerToken, type SdfErrorDetail } from '../errors.js';

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
 * (any object with both `amount` and `currency`). Walks iteratively so deep nesting cannot overflow the stack.
 */
export function checkDataRules(data: unknown): void {
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
    // Paths are built only for money that breaks a rule: a path string per value would double the memory
    // a large data.json takes (and its time), for errors that are rare.
    const stack: Frame[] = [{ value: data }];
    while (stack.length > 0 && details.length < MAX_DETAILS) {
      const frame = stack.pop()!;
      const value = frame.value;
      if (typeof value !== 'object' || value === null) continue;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          const child: unknown = value[i];
          if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: frame, key: i });
        }
        continue;
      }
      const record = value as Record<string, unknown>;
      if ('amount' in record && 'currency' in record) checkMoney(record, frame, details);
      for (const key in record) {
        const child = record[key];
        if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: frame, key });
      }
    }
  }
  if (details.length > 0) {
    throw new SdfError(
      'SDF_ERROR_INVALID_DATA',
      `data.json breaks a format rule: ${details[0]!.message}`,
      'data.json',
      details,
    );
  }
}

interface Frame {
  value: unknown;
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
  const { amount, currency } = money;
  const amountOk = typeof amount === 'string' && AMOUNT.test(amount);
  const currencyOk = typeof currency === 'string' && CURRENCIES.has(currency);
  if (amountOk && currencyOk) return;
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
