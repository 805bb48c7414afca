/**
 * How data.json's values are written in the visual layer. The rule throughout: the text a reader
 * extracts is the data's own value (rule 4 of SDF_FORMAT 4.3: what people read and what machines read
 * are the same document), so values are never rounded, regrouped or translated, only completed.
 */

/** ISO 4217 currencies whose minor unit is not two digits; every other code has two. */
const MINOR_UNITS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

export interface Money {
  amount: string;
  currency: string;
}

export function isMoney(value: unknown): value is Money {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Money).amount === 'string' &&
    typeof (value as Money).currency === 'string'
  );
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An amount as its currency writes it: decimals completed to the currency's minor unit ("24" EUR is
 * "24.00"), never cut (an amount with more decimals keeps them all), no grouping separators, so the
 * extracted text still holds data.json's digits (rule 8: the amount string is the value).
 */
export function formatAmount(amount: string, currency: string): string {
  const match = /^(-?\d+)(?:\.(\d+))?$/.exec(amount);
  if (!match) return amount;
  const digits = MINOR_UNITS[currency] ?? 2;
  const decimals = match[2] ?? '';
  if (decimals.length >= digits) return amount;
  return `${match[1]}.${decimals.padEnd(digits, '0')}`;
}

export const formatMoney = (money: Money): string => `${formatAmount(money.amount, money.currency)} ${money.currency}`;

/** A scalar as text; dates and times stay in their ISO 8601 form (rule 9), as the data holds them. */
export function formatScalar(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (isMoney(value)) return formatMoney(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** `payment_terms` -> `Payment terms`; camelCase too. */
export function humanize(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  const label = words.replace(/\b(vat|iban|bic|id|sku|imo|eta|dwt|eic|po|locode)\b/g, (w) => w.toUpperCase());
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** A VAT rate as written in data ("0.19") shown as a percentage ("19%"), exactly, without floating point. */
export function formatRate(rate: unknown): string {
  if (typeof rate === 'number') return formatRate(String(rate));
  if (typeof rate !== 'string') return formatScalar(rate);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (!match) return rate;
  const fraction = (match[2] ?? '').padEnd(2, '0');
  const whole = `${match[1]}${fraction.slice(0, 2)}`.replace(/^0+(?=\d)/, '');
  const rest = fraction.slice(2).replace(/0+$/, '');
  return `${whole}${rest ? `.${rest}` : ''}%`;
}

/** Decimal strings as scaled integers: sums and products of amounts without binary rounding. */
export class Decimal {
  private constructor(
    readonly units: bigint,
    readonly scale: number,
  ) {}

  static parse(text: string): Decimal | undefined {
    const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!match) return undefined;
    const fraction = match[3] ?? '';
    const units = BigInt(`${match[2]}${fraction}`);
    return new Decimal(match[1] === '-' ? -units : units, fraction.length);
  }

  static zero(scale: number): Decimal {
    return new Decimal(0n, scale);
  }

  private rescale(scale: number): bigint {
    return this.units * 10n ** BigInt(scale - this.scale);
  }

  plus(other: Decimal): Decimal {
    const scale = Math.max(this.scale, other.scale);
    return new Decimal(this.rescale(scale) + other.rescale(scale), scale);
  }

  times(other: Decimal): Decimal {
    return new Decimal(this.units * other.units, this.scale + other.scale);
  }

  /** Rounded half away from zero to `scale` decimals. */
  round(scale: number): Decimal {
    if (scale >= this.scale) return new Decimal(this.rescale(scale), scale);
    const divisor = 10n ** BigInt(this.scale - scale);
    const negative = this.units < 0n;
    const magnitude = negative ? -this.units : this.units;
    let quotient = magnitude / divisor;
    if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
    return new Decimal(negative ? -quotient : quotient, scale);
  }

  toString(): string {
    const negative = this.units < 0n;
    const digits = (negative ? -this.units : this.units).toString().padStart(this.scale + 1, '0');
    const whole = this.scale === 0 ? digits : `${digits.slice(0, -this.scale)}.${digits.slice(-this.scale)}`;
    return negative ? `-${whole}` : whole;
  }
}

export const minorUnits = (currency: string): number => MINOR_UNITS[currency] ?? 2;
