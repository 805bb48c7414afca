import { invoiceData } from '../src/sdf/testing/build-sdf.js';

/** The benchmarks' invoice with `items` line items; about 190 bytes of data.json per item. */
export function invoiceWith(items: number): Record<string, unknown> {
  const data = invoiceData();
  data.line_items = Array.from({ length: items }, (_, i) => ({
    description: `Industrial valve Type-A, batch ${i}, stainless steel, DN50 PN16`,
    quantity: 1 + (i % 50),
    subtotal: { amount: `${(i * 7.31).toFixed(2)}`, currency: 'EUR' },
  }));
  return data;
}
