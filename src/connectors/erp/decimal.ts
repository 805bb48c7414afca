/**
 * Decimal strings compared and multiplied exactly (C2: amounts are decimal strings; a float would
 * call 0.1 + 0.2 and 0.3 different). Scaled BigInt arithmetic, no rounding anywhere.
 */
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

interface Scaled {
  value: bigint;
  scale: number;
}

function parse(input: string): Scaled | null {
  const m = DECIMAL.exec(input.trim());
  if (!m) return null;
  const frac = m[3] ?? '';
  const value = BigInt(m[2] + frac) * (m[1] === '-' ? -1n : 1n);
  return { value, scale: frac.length };
}

function format({ value, scale }: Scaled): string {
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  let frac = scale ? digits.slice(-scale) : '';
  digits = scale ? digits.slice(0, -scale) : digits;
  frac = frac.replace(/0+$/, '');
  const out = frac ? `${digits}.${frac}` : digits;
  return negative && out !== '0' ? `-${out}` : out;
}

/** A number or numeric string as a decimal string; numbers are taken by their shortest representation. */
export function toDecimalString(input: unknown): string | null {
  if (typeof input === 'number' && Number.isFinite(input)) {
    const text = String(input);
    return /e/i.test(text) ? null : text;
  }
  if (typeof input === 'string' && parse(input)) return input.trim();
  return null;
}

/** Canonical form: no leading '+', no trailing fractional zeros ("50.000" and "50" are one value). */
export function normalizeDecimal(input: string): string | null {
  const parsed = parse(input);
  return parsed ? format(parsed) : null;
}

export function decimalEquals(a: string, b: string): boolean {
  const x = normalizeDecimal(a);
  return x !== null && x === normalizeDecimal(b);
}

export function multiplyDecimals(a: string, b: string): string | null {
  const x = parse(a);
  const y = parse(b);
  return x && y ? format({ value: x.value * y.value, scale: x.scale + y.scale }) : null;
}

export function divideByDecimal(a: string, b: string): string | null {
  // Only exact divisions by a power of ten (SAP's price unit: a price per 10 or per 1000 pieces).
  const x = parse(a);
  const y = normalizeDecimal(b);
  if (!x || !y || !/^10*$/.test(y)) return null;
  return format({ value: x.value, scale: x.scale + y.length - 1 });
}

export function addDecimals(values: readonly string[]): string | null {
  let sum: Scaled = { value: 0n, scale: 0 };
  for (const v of values) {
    const p = parse(v);
    if (!p) return null;
    const scale = Math.max(sum.scale, p.scale);
    sum = {
      value: sum.value * 10n ** BigInt(scale - sum.scale) + p.value * 10n ** BigInt(scale - p.scale),
      scale,
    };
  }
  return format(sum);
}
