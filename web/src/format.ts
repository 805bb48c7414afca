/** How values of business data are shown: amounts by their currency, dates as dates, keys as words. */

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const CURRENCY = /^[A-Z]{3}$/;
const AMOUNT_KEY = /(amount|total|price|net|gross|vat|tax|subtotal|sum|balance|fee|discount)/i;
const NOT_AMOUNT_KEY = /(rate|percent|quantity|qty|count|number|_id$|^id$)/i;

export function humanKey(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  const fixed = words.replace(/\b(vat|iban|bic|id|iso|url|erp|po|uuid|sdf|pdf)\b/g, (w) => w.toUpperCase());
  return fixed.charAt(0).toUpperCase() + fixed.slice(1);
}

export function isAmountKey(key: string): boolean {
  return AMOUNT_KEY.test(key) && !NOT_AMOUNT_KEY.test(key);
}

export function formatAmount(value: number, currency: string | null, locale?: string): string {
  if (currency && CURRENCY.test(currency)) {
    try {
      return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(value);
    } catch {
      // An unknown code: the number alone, with the code after it.
      return `${new Intl.NumberFormat(locale, { minimumFractionDigits: 2 }).format(value)} ${currency}`;
    }
  }
  return new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(value);
}

export function formatScalar(key: string, value: unknown, currency: string | null, locale?: string): string {
  if (value === null) return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') {
    return isAmountKey(key) ? formatAmount(value, currency, locale) : new Intl.NumberFormat(locale).format(value);
  }
  if (typeof value === 'string') {
    if (isAmountKey(key) && /^-?\d+(\.\d+)?$/.test(value)) return formatAmount(Number(value), currency, locale);
    if (ISO_DATE.test(value)) {
      const date = new Date(`${value}T00:00:00Z`);
      if (!Number.isNaN(date.getTime())) {
        return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(date);
      }
    }
    if (ISO_DATE_TIME.test(value)) {
      const date = new Date(value);
      if (!Number.isNaN(date.getTime())) {
        return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short' }).format(date);
      }
    }
    return value;
  }
  return JSON.stringify(value);
}

/** The currency that applies to an object: its own `currency`, else the enclosing one. */
export function currencyOf(value: Record<string, unknown>, inherited: string | null): string | null {
  const own = value.currency ?? value.currency_code ?? value.currencyCode;
  return typeof own === 'string' && CURRENCY.test(own) ? own : inherited;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

/** A calendar date (YYYY-MM-DD) as the reader's locale writes it; the day itself, whatever the time zone. */
export function formatDay(date: string | null | undefined): string {
  if (!date) return '—';
  const day = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(day.getTime())
    ? date
    : new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).format(day);
}
