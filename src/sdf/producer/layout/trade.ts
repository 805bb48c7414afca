import type { Block, DocumentLayout, Row, Table, TotalLine } from './blocks.js';
import { Decimal, formatMoney, formatRate, formatScalar, humanize, isMoney, isRecord, minorUnits } from './format.js';
import { buildTable, pick, remainingBlocks, rowsOf } from './generic.js';
import { addressLines, letterhead, partyRows } from './parties.js';

/** The roles of a line item's fields, in the order of the table's columns, and the names data uses. */
const ITEM_ROLES = [
  { role: 'position', header: 'No.', names: ['line_number', 'position', 'line_no', 'line'] },
  { role: 'sku', header: 'SKU', names: ['sku', 'article_number', 'product_code', 'item_code'] },
  { role: 'description', header: 'Description', names: ['description', 'name', 'title', 'text'] },
  { role: 'quantity', header: 'Quantity', names: ['quantity', 'qty'] },
  { role: 'unit', header: 'Unit', names: ['unit', 'uom'] },
  { role: 'unit_price', header: 'Unit price', names: ['unit_price', 'price'] },
  { role: 'vat_rate', header: 'VAT', names: ['vat_rate', 'tax_rate'] },
  { role: 'amount', header: 'Amount', names: ['subtotal', 'amount', 'line_total', 'total', 'net_amount'] },
] as const;

const ITEMS = ['line_items', 'items', 'lines', 'positions'];

/**
 * The line-item table: known fields in their usual columns (amount last), any other field of the
 * items in a column of its own after the description.
 */
function itemsTable(items: Record<string, unknown>[]): Table {
  const used = new Map<string, string>(); // role -> key
  for (const role of ITEM_ROLES) {
    const key = role.names.find((n) => items.some((item) => item[n] !== undefined));
    if (key !== undefined) used.set(role.role, key);
  }
  const known = new Set(used.values());
  const extra: string[] = [];
  for (const item of items)
    for (const key of Object.keys(item)) if (!known.has(key) && !extra.includes(key)) extra.push(key);
  const columns: Parameters<typeof buildTable>[0] = [];
  for (const role of ITEM_ROLES) {
    const key = used.get(role.role);
    if (role.role === 'quantity') {
      for (const k of extra) columns.push({ header: humanize(k), values: items.map((i) => i[k]) });
    }
    if (key === undefined) continue;
    const values = items.map((i) => i[key]);
    if (role.role === 'vat_rate') columns.push({ header: role.header, values: values.map(formatRate), align: 'right' });
    else columns.push({ header: role.header, values, ...(role.role === 'position' ? { align: 'left' as const } : {}) });
  }
  return buildTable(columns, items.length);
}

/** VAT rates of the items, with the sum of the amounts each applies to, when every item names one. */
function vatBases(items: Record<string, unknown>[]): Map<string, { base: Decimal; currency: string }> | undefined {
  const bases = new Map<string, { base: Decimal; currency: string }>();
  for (const item of items) {
    const rate = item.vat_rate ?? item.tax_rate;
    const amount = item.subtotal ?? item.amount ?? item.line_total ?? item.net_amount;
    if (typeof rate !== 'string' || !isMoney(amount)) return undefined;
    const value = Decimal.parse(amount.amount);
    const current = bases.get(rate);
    if (!value || (current && current.currency !== amount.currency)) return undefined;
    bases.set(rate, { base: current ? current.base.plus(value) : value, currency: amount.currency });
  }
  return bases;
}

/**
 * Net, VAT by rate, gross. One rate: the VAT line names it. Several: a line per rate with the VAT on
 * its items' amounts, then the document's own VAT total.
 */
function totalLines(
  totals: unknown,
  items: Record<string, unknown>[],
): { lines: TotalLine[]; rest: Record<string, unknown> } {
  const lines: TotalLine[] = [];
  if (isMoney(totals)) return { lines: [{ label: 'Total', value: formatMoney(totals), strong: true }], rest: {} };
  if (!isRecord(totals)) return { lines, rest: {} };
  const { net, vat, tax, gross, total, ...rest } = totals;
  const bases = vatBases(items);
  if (isMoney(net)) lines.push({ label: 'Net amount', value: formatMoney(net) });
  const vatTotal = vat ?? tax;
  if (bases && bases.size > 1) {
    for (const [rate, { base, currency }] of bases) {
      const rateValue = Decimal.parse(rate)!;
      const due = base.times(rateValue).round(minorUnits(currency));
      lines.push({ label: `VAT ${formatRate(rate)} of ${base.toString()}`, value: `${due.toString()} ${currency}` });
    }
    if (isMoney(vatTotal)) lines.push({ label: 'VAT total', value: formatMoney(vatTotal) });
  } else if (isMoney(vatTotal)) {
    const rate = bases && bases.size === 1 ? ` ${formatRate([...bases.keys()][0])}` : '';
    lines.push({ label: `VAT${rate}`, value: formatMoney(vatTotal) });
  }
  for (const [key, value] of Object.entries(rest)) {
    if (isMoney(value)) lines.push({ label: humanize(key), value: formatMoney(value) });
  }
  const grand = gross ?? total;
  if (isMoney(grand)) lines.push({ label: 'Total', value: formatMoney(grand), strong: true });
  const left = Object.fromEntries(Object.entries(rest).filter(([, v]) => !isMoney(v)));
  return { lines, rest: left };
}

interface TradeSpec {
  title: string;
  /** Who issues the document (letterhead), who receives it (addressed block). */
  issuer: readonly string[];
  recipient: readonly string[];
  recipientHeading: string;
  number: readonly string[];
  numberLabel: string;
  /** Facts beside the recipient, in this order, when present. */
  facts: readonly { names: readonly string[]; label: string }[];
}

export const INVOICE: TradeSpec = {
  title: 'Invoice',
  issuer: ['seller', 'issuer', 'supplier', 'vendor'],
  recipient: ['buyer', 'recipient', 'customer', 'bill_to'],
  recipientHeading: 'Bill to',
  number: ['invoice_number', 'number', 'invoice_id'],
  numberLabel: 'Invoice number',
  facts: [
    { names: ['issue_date', 'invoice_date', 'date'], label: 'Issue date' },
    { names: ['due_date'], label: 'Due date' },
    { names: ['delivery_date', 'service_date'], label: 'Delivery date' },
    { names: ['order_ref', 'order_reference', 'po_number'], label: 'Order reference' },
    { names: ['contract_ref'], label: 'Contract reference' },
    { names: ['currency'], label: 'Currency' },
  ],
};

export const PURCHASE_ORDER: TradeSpec = {
  title: 'Purchase order',
  issuer: ['buyer', 'issuer', 'customer'],
  recipient: ['supplier', 'seller', 'vendor', 'recipient'],
  recipientHeading: 'Supplier',
  number: ['po_number', 'order_number', 'number'],
  numberLabel: 'Order number',
  facts: [
    { names: ['issue_date', 'order_date', 'date'], label: 'Order date' },
    { names: ['delivery_date', 'requested_delivery_date'], label: 'Delivery date' },
    { names: ['payment_terms'], label: 'Payment terms' },
    { names: ['contract_ref'], label: 'Contract reference' },
    { names: ['currency'], label: 'Currency' },
  ],
};

/** Delivery (purchase orders) or payment (invoices): where goods go or money comes, as fields. */
function detailSection(heading: string, value: unknown): Block[] {
  if (!isRecord(value)) return [];
  const { address, ...rest } = value;
  const columns = [];
  const lines = addressLines(address);
  if (lines.length > 0) columns.push({ heading: 'Address', rows: lines.map((text) => ({ text })) });
  const fields = rowsOf(rest);
  if (fields.length > 0) columns.push({ rows: fields });
  return columns.length > 0
    ? [
        { kind: 'heading', text: heading },
        { kind: 'columns', columns },
      ]
    : [];
}

/** Invoices and purchase orders: letterhead, title, addressee and facts, items, totals, then the rest. */
export function tradeLayout(data: Record<string, unknown>, spec: TradeSpec): DocumentLayout {
  const shown = new Set<string>(['document_type']);
  const use = (names: readonly string[]): unknown => {
    const key = pick(data, names);
    if (key === undefined) return undefined;
    shown.add(key);
    return data[key];
  };
  const blocks: Block[] = [];
  const issuer = use(spec.issuer);
  const head = letterhead(issuer);
  if (head) blocks.push(head);
  blocks.push({ kind: 'title', text: spec.title });

  const number = use(spec.number);
  const facts: Row[] = [];
  if (number !== undefined) facts.push({ label: spec.numberLabel, text: formatScalar(number), bold: true });
  for (const fact of spec.facts) {
    const value = use(fact.names);
    if (value !== undefined && !isRecord(value)) facts.push({ label: fact.label, text: formatScalar(value) });
  }
  const recipient = use(spec.recipient);
  const addressee = recipient === undefined ? [] : [{ heading: spec.recipientHeading, rows: partyRows(recipient) }];
  blocks.push({ kind: 'columns', columns: [...addressee, { rows: facts }] });
  if (!head && issuer !== undefined) {
    blocks.push({ kind: 'heading', text: 'From' }, { kind: 'columns', columns: [{ rows: partyRows(issuer) }] });
  }
  if (spec === PURCHASE_ORDER) {
    const deliveryKey = pick(data, ['delivery', 'ship_to']);
    if (deliveryKey && isRecord(data[deliveryKey])) {
      shown.add(deliveryKey);
      blocks.push(...detailSection('Delivery', data[deliveryKey]));
    }
    const address = use(['delivery_address']);
    if (address !== undefined) {
      blocks.push({ kind: 'heading', text: 'Deliver to' });
      blocks.push({ kind: 'columns', columns: [{ rows: addressLines(address).map((text) => ({ text })) }] });
    }
  }

  const itemsKey = pick(data, ITEMS);
  const rawItems = itemsKey !== undefined ? data[itemsKey] : undefined;
  const items = Array.isArray(rawItems) && rawItems.every(isRecord) ? (rawItems as Record<string, unknown>[]) : [];
  const totals = use(['totals', 'total']);
  const { lines, rest } = totalLines(totals, items);
  if (items.length > 0) {
    shown.add(itemsKey!);
    blocks.push({ kind: 'table', table: { ...itemsTable(items), totals: lines } });
  } else if (lines.length > 0) {
    blocks.push({ kind: 'totals', lines });
  }
  if (Object.keys(rest).length > 0) {
    blocks.push({ kind: 'heading', text: 'Totals' }, { kind: 'columns', columns: [{ rows: rowsOf(rest) }] });
  }

  const payment = pick(data, ['payment', 'bank_details', 'bank']);
  if (payment && isRecord(data[payment])) {
    shown.add(payment);
    const terms = spec === INVOICE ? use(['payment_terms']) : undefined;
    const value = terms === undefined ? data[payment] : { terms, ...(data[payment] as Record<string, unknown>) };
    blocks.push(...detailSection('Payment', value));
  } else if (spec === INVOICE && data.payment_terms !== undefined) {
    blocks.push({ kind: 'heading', text: 'Payment' });
    blocks.push({
      kind: 'columns',
      columns: [{ rows: [{ label: 'Terms', text: formatScalar(use(['payment_terms'])) }] }],
    });
  }
  blocks.push(...remainingBlocks(data, shown));
  const footer = number === undefined ? spec.title : `${spec.title} ${formatScalar(number)}`;
  return { title: footer, footer, blocks };
}
