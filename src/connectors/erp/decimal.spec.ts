import { describe, expect, it } from 'vitest';
import {
  addDecimals,
  decimalEquals,
  divideByDecimal,
  multiplyDecimals,
  normalizeDecimal,
  toDecimalString,
} from './decimal.js';
import { odataEquals, oracleEquals } from './filters.js';

describe('decimal strings', () => {
  it('compares values, not spellings, and never through floats', () => {
    expect(decimalEquals('50', '50.000')).toBe(true);
    expect(decimalEquals('0.3', '0.30')).toBe(true);
    expect(decimalEquals('1200.00', '1200.01')).toBe(false);
    expect(normalizeDecimal('-0.0')).toBe('0');
    expect(normalizeDecimal('abc')).toBeNull();
    expect(addDecimals(['0.1', '0.2'])).toBe('0.3');
    expect(multiplyDecimals('50', '24.00')).toBe('1200');
    expect(divideByDecimal('2400', '100')).toBe('24');
    expect(divideByDecimal('1', '3')).toBeNull();
    expect(toDecimalString(50)).toBe('50');
    expect(toDecimalString(1e21)).toBeNull();
  });
});

describe('filter escaping', () => {
  it('keeps a hostile reference one literal', () => {
    expect(odataEquals([['PurchaseOrder', "X' or '1'='1"]])).toBe("PurchaseOrder eq 'X'' or ''1''=''1'");
    expect(oracleEquals([['OrderNumber', "X';Supplier='A"]])).toBe("OrderNumber='X'';Supplier=''A'");
  });
});
