import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referenceInvoice, referenceNomination, referencePurchaseOrder } from './testing/reference-examples.js';
import { resolvePointer, summarize, SUMMARY_LIMITS } from './summary.js';

const example = (name: string, file: 'data' | 'meta'): unknown =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}/${file}.json`, import.meta.url), 'utf8'));

describe('summarize(): the examples', () => {
  it('an invoice: number, buyer, gross total, dates and the order it bills', () => {
    expect(summarize(example('invoice', 'data'), example('invoice', 'meta'))).toEqual({
      title: 'Invoice INV-2026-00142',
      number: 'INV-2026-00142',
      issuer: 'Acme GmbH',
      counterparty: 'Globex Ltd',
      amount: '1713.60',
      currency: 'EUR',
      issue_date: '2026-03-15',
      due_date: '2026-04-14',
      references: ['PO-2026-0815'],
    });
  });

  it('a purchase order: order number, supplier, total, delivery date as due', () => {
    expect(summarize(example('purchase-order', 'data'), example('purchase-order', 'meta'))).toEqual({
      title: 'Purchase order PO-2026-0815',
      number: 'PO-2026-0815',
      issuer: 'Globex Ltd',
      counterparty: 'Acme GmbH',
      amount: '1440.00',
      currency: 'EUR',
      issue_date: '2026-03-02',
      due_date: '2026-03-20',
      references: [],
    });
  });

  it('a nomination: nomination_ref as number, the submission date, the gas day as due', () => {
    expect(summarize(example('nomination', 'data'), example('nomination', 'meta'))).toEqual({
      title: 'Nomination 80000815',
      number: '80000815',
      issuer: 'Acme Energy Trading GmbH',
      counterparty: null,
      amount: null,
      currency: null,
      issue_date: '2026-03-15',
      due_date: '2026-03-16',
      references: [],
    });
  });

  it('the format specification layout: issuer/recipient, po_number, contract_ref', () => {
    const meta = (issuer: string) => ({ issuer: { name: issuer, id: 'X' } });
    expect(summarize(referenceInvoice(), meta('Acme Supplies GmbH'))).toMatchObject({
      title: 'Invoice INV-2026-00142',
      counterparty: 'Global Logistics AG',
      amount: '1713.60',
      due_date: '2026-04-15',
      references: ['PO-2026-0042'],
    });
    expect(summarize(referencePurchaseOrder(), meta('Global Logistics AG'))).toMatchObject({
      title: 'Purchase order PO-2026-00388',
      number: 'PO-2026-00388',
      issuer: 'Global Logistics AG',
      counterparty: 'Acme Supplies GmbH',
      amount: '1713.60',
    });
    expect(summarize(referenceNomination(), meta('Nordic Energy Trading AS'))).toMatchObject({
      title: 'Nomination NOM-2026-0042',
      counterparty: 'Baltic Ship Agents Ltd',
      issue_date: '2026-03-10',
      references: ['CT-2025-NE-0017'],
    });
  });

  it("the issuer is always meta.json's, never data's supplier or seller", () => {
    const data = { document_type: 'invoice', invoice_number: 'A-1', seller: { name: 'Data Seller' } };
    expect(summarize(data, { issuer: 'Meta Issuer' }).issuer).toBe('Meta Issuer');
    expect(summarize(data, {}).issuer).toBeNull();
    const po = { document_type: 'purchase_order', po_number: 'P-1', supplier: { name: 'Supplier Co' } };
    expect(summarize(po, { issuer: { name: 'Buyer Co' } })).toMatchObject({
      issuer: 'Buyer Co',
      counterparty: 'Supplier Co',
    });
  });
});

describe('summarize(): types nobody mapped and tenant mappings', () => {
  it('takes the first identifier-like strings of an unmapped type', () => {
    const data = {
      document_type: 'delivery_note',
      carrier: 'DHL',
      delivery_note_no: 'DN-77',
      order_ref: 'PO-1',
      customer: { name: 'Globex' },
      date: '2026-01-02',
    };
    expect(summarize(data, { issuer: 'Acme' })).toEqual({
      title: 'Delivery note DN-77',
      number: 'DN-77',
      issuer: 'Acme',
      counterparty: 'Globex',
      amount: null,
      currency: null,
      issue_date: '2026-01-02',
      due_date: null,
      references: ['PO-1'],
    });
  });

  it('a mapping of its own wins for the fields it names', () => {
    const data = {
      document_type: 'invoice',
      invoice_number: 'A-1',
      meta: { no: 'X-9' },
      sum: { value: '10.5', cur: 'USD' },
    };
    const summary = summarize(
      data,
      { issuer: 'I' },
      {
        label: 'Bill',
        number: ['/meta/no'],
        amount: ['/sum/value'],
        currency: ['/sum/cur'],
      },
    );
    expect(summary).toMatchObject({ title: 'Bill X-9', number: 'X-9', amount: '10.5', currency: 'USD' });
  });
});

describe('summarize(): hostile data', () => {
  it('never throws on odd types and keeps nothing unusable', () => {
    const odd: unknown[] = [null, 42, 'text', [], [1, 2], true, { document_type: 7 }, Object.create(null)];
    for (const data of odd) for (const meta of odd) expect(() => summarize(data, meta)).not.toThrow();
    const data = {
      document_type: 'invoice',
      invoice_number: { nested: true },
      buyer: ['not', 'a', 'party'],
      totals: { gross: { amount: '1e9', currency: 'euro' } },
      issue_date: '2026-02-30',
      due_date: 20260301,
      order_ref: '\u0000',
    };
    expect(summarize(data, { issuer: 12 })).toEqual({
      title: 'Invoice',
      number: null,
      issuer: null,
      counterparty: null,
      amount: null,
      currency: null,
      issue_date: null,
      due_date: null,
      references: [],
    });
  });

  it('bounds every string and the references', () => {
    const long = 'x'.repeat(100_000);
    const refs = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`r${i}_ref`, `R-${i}`]));
    const summary = summarize(
      { document_type: 'thing', thing_number: long, ...refs, customer: { name: `a\n\tb${long}` } },
      { issuer: long },
    );
    expect(summary.number!.length).toBe(SUMMARY_LIMITS.reference);
    expect(summary.title.length).toBeLessThanOrEqual(SUMMARY_LIMITS.title);
    expect(summary.issuer!.length).toBe(SUMMARY_LIMITS.name);
    expect(summary.counterparty!.startsWith('a b')).toBe(true);
    expect(summary.references).toHaveLength(SUMMARY_LIMITS.references);
  });

  it('does not cut inside a surrogate pair', () => {
    const name = `${'x'.repeat(SUMMARY_LIMITS.name - 1)}😀tail`;
    expect(summarize({ document_type: 'invoice', buyer: { name } }, {}).counterparty).toBe(
      'x'.repeat(SUMMARY_LIMITS.name - 1),
    );
  });

  it('pointers follow own properties only', () => {
    expect(resolvePointer({}, '/constructor')).toBeUndefined();
    expect(resolvePointer({ a: [{ 'b/c': 1 }] }, '/a/0/b~1c')).toBe(1);
    expect(resolvePointer({ a: 1 }, 'a')).toBeUndefined();
  });
});
