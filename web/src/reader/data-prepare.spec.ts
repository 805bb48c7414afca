import { describe, expect, it } from 'vitest';
import { FIRST_PAGE, NODE_BUDGET, TEXT_SHOWN, preparePage, prepareRoot, resolve, type Json } from './data-prepare.js';
import { summaryOf } from './data-summary.js';

/** Every node of a prepared picture, nested ones included. */
function countNodes(node: unknown): number {
  if (typeof node !== 'object' || node === null) return 0;
  let total = 't' in node ? 1 : 0;
  for (const value of Object.values(node)) total += countNodes(value);
  return total;
}

describe('data.json prepared for the data view', () => {
  it('cuts a long string and keeps where it is', () => {
    const note = 'x'.repeat(1_000_000);
    const root = prepareRoot({ document_type: 'statement', note });
    expect(root).toMatchObject({ t: 'object', total: 2 });
    const field = root.t === 'object' ? root.page![1]! : undefined;
    expect(field).toMatchObject({ key: 'note', node: { t: 'text', length: 1_000_000, path: [1] } });
    expect((field!.node as { v: string }).v).toHaveLength(TEXT_SHOWN);
    expect(resolve({ document_type: 'statement', note }, [1])?.value).toBe(note);
  });

  it('never splits a character made of two code units', () => {
    const text = `${'a'.repeat(TEXT_SHOWN - 1)}😀${'b'.repeat(10)}`;
    const root = prepareRoot({ text });
    const node = root.t === 'object' ? root.page![0]!.node : undefined;
    expect(node).toMatchObject({ t: 'text', v: 'a'.repeat(TEXT_SHOWN - 1) });
  });

  it('gives a big object its first page and the rest by offset', () => {
    const data: Json = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));
    const root = prepareRoot(data);
    expect(root).toMatchObject({ t: 'object', total: 200_000 });
    expect(root.t === 'object' && root.page).toHaveLength(FIRST_PAGE);
    const page = preparePage(data, [], 150_000, 3);
    expect(page).toEqual({
      t: 'fields',
      fields: [150_000, 150_001, 150_002].map((i) => ({
        key: `k${i}`,
        keyLength: `k${i}`.length,
        node: { t: 'scalar', v: i },
      })),
    });
  });

  it('stays within its budget however deep and wide the data is, leaving the rest closed', () => {
    const wide = (depth: number): Json =>
      depth === 0 ? 'leaf' : Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`n${i}`, wide(depth - 1)]));
    const root = prepareRoot(wide(3));
    expect(countNodes(root)).toBeLessThan(NODE_BUDGET + FIRST_PAGE * 2);
    const closed = JSON.stringify(root).match(/"t":"object","path":\[[\d,]+\],"total":50,"currency":null\}/g);
    expect(closed?.length).toBeGreaterThan(0);
  });

  it('shows a list of objects as a table whose cells point back into the data', () => {
    const data: Json = {
      currency: 'EUR',
      lines: [
        { description: 'Paper', net: { amount: '10.00', currency: 'EUR' } },
        { description: 'Ink', quantity: 2 },
      ],
    };
    const root = prepareRoot(data);
    const lines = root.t === 'object' ? root.page![1]!.node : undefined;
    expect(lines).toMatchObject({
      t: 'table',
      total: 2,
      columns: [
        { key: 'description', numeric: false },
        { key: 'net', numeric: true },
        { key: 'quantity', numeric: true },
      ],
      rows: [
        { currency: 'EUR', cells: [{ t: 'text', v: 'Paper', path: [1, 0, 0] }, { t: 'money' }, null] },
        { currency: 'EUR', cells: [{ t: 'text', v: 'Ink', path: [1, 1, 0] }, null, { t: 'scalar', v: 2 }] },
      ],
    });
  });

  it("cuts the summary's facts", () => {
    const facts = summaryOf(
      { document_type: 'invoice', invoice_number: 'N'.repeat(1_000_000) },
      { document_type: 'invoice', issuer: { name: 'I'.repeat(1_000_000) } },
    );
    expect(facts.length).toBe(2);
    for (const fact of facts) expect(fact.value.length).toBeLessThan(250);
  });

  it("names meta.json's issuer as the sender for every type, never data.json's supplier or seller", () => {
    const order = summaryOf(
      {
        document_type: 'purchase_order',
        po_number: 'PO-2026-0042',
        issuer: { name: 'Acme GmbH' },
        supplier: { name: 'Acme GmbH' },
        totals: { gross: { amount: '250.00', currency: 'EUR' } },
      },
      { document_type: 'purchase_order', issuer: { name: 'Globex Ltd', id: 'x' } },
    );
    expect(order).toContainEqual({ label: 'From', value: 'Globex Ltd' });
    expect(order).toContainEqual({ label: 'To', value: 'Acme GmbH' });
    expect(order[0]).toEqual({ label: 'Document', value: 'Purchase order PO-2026-0042' });
    // No issuer in meta.json: no sender is named, rather than one guessed from the data.
    const bare = summaryOf({ document_type: 'invoice', seller: { name: 'Acme GmbH' } }, {});
    expect(bare.find((f) => f.label === 'From')).toBeUndefined();
  });
});
