import type { ErpClient } from './client.js';
import { toDecimalString } from './decimal.js';
import { oracleEquals } from './filters.js';
import { expectOk, type ErpResponse } from './http.js';
import type { ErpAdapter, ErpDelivery, ErpDoc, ErpOrder, InvoiceDoc, NominationDoc } from './model.js';

/** C2: Oracle Fusion Cloud REST (financials and supply chain), dates `YYYY-MM-DD`. */
export const ORACLE_ROOT = '/fscmRestApi/resources/11.13.18.05';

type Row = Record<string, unknown>;
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function query(params: Record<string, string>): string {
  return (
    '?' +
    Object.entries({ onlyData: 'true', ...params })
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&')
  );
}

/** Oracle REST collections: `{items: [...], count, hasMore, limit, offset}`. */
function items(res: ErpResponse): Row[] {
  const parsed = JSON.parse(res.body) as { items?: unknown };
  return Array.isArray(parsed.items) ? (parsed.items as Row[]) : [];
}

export class OracleAdapter implements ErpAdapter {
  readonly supplierKey = 'name';

  constructor(private readonly client: ErpClient) {}

  async healthCheck(signal: AbortSignal): Promise<void> {
    const path = `${ORACLE_ROOT}/purchaseOrders` + query({ limit: '1', fields: 'POHeaderId' });
    expectOk(await this.client.once({ method: 'GET', path }, signal));
  }

  async findOrder(ref: string, signal: AbortSignal): Promise<ErpOrder | null> {
    const path = `${ORACLE_ROOT}/purchaseOrders` + query({ q: oracleEquals([['OrderNumber', ref]]), expand: 'lines' });
    const [po] = items(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    if (!po) return null;
    const lines = Array.isArray(po.lines) ? (po.lines as Row[]) : [];
    return {
      id: String(po.OrderNumber ?? po.POHeaderId),
      supplier: text(po.Supplier),
      currency: text(po.CurrencyCode),
      net: toDecimalString(po.Ordered),
      lines: lines.map((l) => ({
        item: String(l.LineNumber),
        description: text(l.Description),
        quantity: toDecimalString(l.Quantity),
        unitPrice: toDecimalString(l.Price),
      })),
    };
  }

  async findDelivery(ref: string, signal: AbortSignal): Promise<ErpDelivery | null> {
    const path =
      `${ORACLE_ROOT}/receivingReceiptRequests` +
      query({ q: oracleEquals([['ShipmentNumber', ref]]), expand: 'lines' });
    const [head] = items(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    if (!head) return null;
    const lines = Array.isArray(head.lines) ? (head.lines as Row[]) : [];
    return {
      id: String(head.HeaderInterfaceId ?? head.ShipmentNumber),
      supplier: text(head.VendorName),
      deliveryDate: text(head.ExpectedReceiptDate),
      quantity: lines.length === 1 ? toDecimalString(lines[0].Quantity) : null,
    };
  }

  async findPushed(doc: ErpDoc, signal: AbortSignal): Promise<string | null> {
    if (doc.kind === 'invoice') {
      const pairs: [string, string][] = [['InvoiceNumber', doc.invoiceNumber]];
      if (doc.supplierName) pairs.push(['Supplier', doc.supplierName]);
      const path = `${ORACLE_ROOT}/invoices` + query({ q: oracleEquals(pairs), fields: 'InvoiceId,InvoiceNumber' });
      const [hit] = items(expectOk(await this.client.once({ method: 'GET', path }, signal)));
      return hit ? String(hit.InvoiceId) : null;
    }
    const path =
      `${ORACLE_ROOT}/receivingReceiptRequests` +
      query({ q: oracleEquals([['ShipmentNumber', doc.reference]]), fields: 'HeaderInterfaceId' });
    const [hit] = items(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    return hit ? String(hit.HeaderInterfaceId) : null;
  }

  async create(doc: ErpDoc, signal: AbortSignal): Promise<string> {
    const [resource, payload, idField] =
      doc.kind === 'invoice'
        ? ['invoices', oracleInvoicePayload(doc), 'InvoiceId']
        : ['receivingReceiptRequests', oracleReceiptPayload(doc), 'HeaderInterfaceId'];
    const res = expectOk(
      await this.client.once({ method: 'POST', path: `${ORACLE_ROOT}/${resource}`, body: payload }, signal),
    );
    return String((JSON.parse(res.body) as Row)[idField]);
  }
}

/** `invoices` with `invoiceLines`; amounts as decimal strings, dates YYYY-MM-DD. */
export function oracleInvoicePayload(doc: InvoiceDoc): Record<string, unknown> {
  return {
    InvoiceNumber: doc.invoiceNumber,
    InvoiceCurrency: doc.currency ?? undefined,
    InvoiceAmount: doc.gross ?? undefined,
    InvoiceDate: doc.issueDate ?? undefined,
    Supplier: doc.supplierName ?? undefined,
    PurchaseOrderNumber: doc.orderRef ?? undefined,
    invoiceLines: doc.lines.map((l, i) => ({
      LineNumber: i + 1,
      LineType: 'Item',
      LineAmount: l.amount ?? undefined,
      Description: l.description ?? undefined,
      Quantity: l.quantity ?? undefined,
      UnitPrice: l.unitPrice ?? undefined,
    })),
  };
}

export function oracleReceiptPayload(doc: NominationDoc): Record<string, unknown> {
  return {
    ShipmentNumber: doc.reference,
    VendorName: doc.supplierName ?? undefined,
    ExpectedReceiptDate: doc.deliveryDate ?? undefined,
    lines: [
      {
        ItemNumber: doc.product ?? undefined,
        Quantity: doc.quantity ?? undefined,
        UnitOfMeasure: doc.unit ?? undefined,
        DocumentNumber: doc.nominationRef ?? undefined,
      },
    ],
  };
}
