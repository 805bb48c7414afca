import { describe, expect, it } from 'vitest';
import { Decimal, formatAmount, formatRate, humanize } from './format.js';

describe('how the visual layer writes values', () => {
  it('completes amounts to the minor unit of their currency and never cuts or rounds them', () => {
    expect(formatAmount('24', 'EUR')).toBe('24.00');
    expect(formatAmount('24.5', 'EUR')).toBe('24.50');
    expect(formatAmount('1200.00', 'EUR')).toBe('1200.00');
    expect(formatAmount('0.12345', 'EUR')).toBe('0.12345');
    expect(formatAmount('-3', 'USD')).toBe('-3.00');
    expect(formatAmount('1500', 'JPY')).toBe('1500');
    expect(formatAmount('1.5', 'BHD')).toBe('1.500');
    expect(formatAmount('12,50', 'EUR')).toBe('12,50');
  });

  it('writes VAT rates as percentages, exactly', () => {
    expect(formatRate('0.19')).toBe('19%');
    expect(formatRate('0.07')).toBe('7%');
    expect(formatRate('0.075')).toBe('7.5%');
    expect(formatRate('0')).toBe('0%');
    expect(formatRate('1')).toBe('100%');
    expect(formatRate(0.2)).toBe('20%');
    expect(formatRate('n/a')).toBe('n/a');
  });

  it('adds and multiplies decimal amounts without binary rounding, rounding half away from zero', () => {
    const sum = Decimal.parse('0.10')!.plus(Decimal.parse('0.2')!);
    expect(sum.toString()).toBe('0.30');
    expect(Decimal.parse('110.05')!.times(Decimal.parse('0.19')!).round(2).toString()).toBe('20.91');
    expect(Decimal.parse('0.125')!.round(2).toString()).toBe('0.13');
    expect(Decimal.parse('-0.125')!.round(2).toString()).toBe('-0.13');
    expect(Decimal.parse('5')!.round(2).toString()).toBe('5.00');
    expect(Decimal.parse('1e3')).toBeUndefined();
  });

  it('turns field names into labels', () => {
    expect(humanize('payment_terms')).toBe('Payment terms');
    expect(humanize('vat_id')).toBe('VAT ID');
    expect(humanize('unitPrice')).toBe('Unit price');
    expect(humanize('port_of_loading')).toBe('Port of loading');
  });
});
