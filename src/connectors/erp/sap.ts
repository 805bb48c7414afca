import type { ErpClient } from './client.js';
import { addDecimals, decimalEquals, divideByDecimal, multiplyDecimals, toDecimalString } from './decimal.js';
import { odataEquals } from './filters.js';
import { ErpHttpError, expectOk, type ErpResponse } from './http.js';
import type { ErpAdapter, ErpDelivery, ErpDoc, ErpOrder, InvoiceDoc, NominationDoc } from './model.js';

/** C2: SAP S/4HANA's published OData V2 APIs. */
const ROOT = '/sap/opu/odata/sap';
export const SAP_SERVICES = {
  purchaseOrder: `${ROOT}/API_PURCHASEORDER_PROCESS_SRV`,
  supplierInvoice: `${ROOT}/API_SUPPLIERINVOICE_PROCESS_SRV`,
  outboundDelivery: `${ROOT}/API_OUTBOUND_DELIVERY_SRV;v=0002`,
} as const;

/** `$filter=...&$expand=...` with every value percent-encoded (the literal inside is escaped already). */
function query(params: Record<string, string>): string {
  return (
    '?' +
    Object.entries({ ...params, $format: 'json' })
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&')
  );
}

/** OData V2 `/Date(<ms>)/` from `YYYY-MM-DD` (midnight UTC), and back. */
export function toSapDate(date: string | null): string | null {
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(ms) ? null : `/Date(${ms})/`;
}

export function fromSapDate(value: unknown): string | null {
  const m = typeof value === 'string' ? /^\/Date\((-?\d+)(?:[+-]\d+)?\)\/$/.exec(value) : null;
  return m ? new Date(Number(m[1])).toISOString().slice(0, 10) : null;
}

type Row = Record<string, unknown>;
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** OData V2 JSON: collections are `{d: {results: [...]}}`, single entities `{d: {...}}`. */
function results(res: ErpResponse): Row[] {
  const d = (JSON.parse(res.body) as { d?: { results?: unknown } }).d;
  return Array.isArray(d?.results) ? (d.results as Row[]) : [];
}

function entity(res: ErpResponse): Row {
  return ((JSON.parse(res.body) as { d?: Row }).d ?? {}) as Row;
}

export class SapAdapter implements ErpAdapter {
  readonly supplierKey = 'id';

  constructor(private readonly client: ErpClient) {}

  async healthCheck(signal: AbortSignal): Promise<void> {
    expectOk(
      await this.client.once(
        { method: 'GET', path: `${SAP_SERVICES.purchaseOrder}/$metadata`, headers: { Accept: 'application/xml' } },
        signal,
      ),
    );
  }

  async findOrder(ref: string, signal: AbortSignal): Promise<ErpOrder | null> {
    const path =
      `${SAP_SERVICES.purchaseOrder}/A_PurchaseOrder` +
      query({ $filter: odataEquals([['PurchaseOrder', ref]]), $expand: 'to_PurchaseOrderItem' });
    const [po] = results(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    if (!po) return null;
    const items = ((po.to_PurchaseOrderItem as { results?: Row[] } | undefined)?.results ?? []).map((i) => {
      const per = toDecimalString(i.NetPriceQuantity) ?? '1';
      const price = toDecimalString(i.NetPriceAmount);
      return {
        item: String(i.PurchaseOrderItem),
        description: text(i.PurchaseOrderItemText),
        quantity: toDecimalString(i.OrderQuantity),
        // A price per 10 or per 100 pieces (NetPriceQuantity) becomes a price per piece.
        unitPrice: price === null || decimalEquals(per, '1') ? price : divideByDecimal(price, per),
      };
    });
    const lineNets = items.map((i) => (i.quantity && i.unitPrice ? multiplyDecimals(i.quantity, i.unitPrice) : null));
    return {
      id: String(po.PurchaseOrder),
      supplier: text(po.Supplier),
      currency: text(po.DocumentCurrency),
      // A_PurchaseOrder carries no header total: the net is the sum of its items.
      net: lineNets.every((n) => n !== null) ? addDecimals(lineNets as string[]) : null,
      lines: items,
    };
  }

  async findDelivery(ref: string, signal: AbortSignal): Promise<ErpDelivery | null> {
    const path =
      `${SAP_SERVICES.outboundDelivery}/A_OutbDeliveryHeader` +
      query({ $filter: odataEquals([['DeliveryDocument', ref]]), $expand: 'to_DeliveryDocumentItem' });
    const [head] = results(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    if (!head) return null;
    const items = (head.to_DeliveryDocumentItem as { results?: Row[] } | undefined)?.results ?? [];
    const quantities = items.map((i) => toDecimalString(i.ActualDeliveryQuantity));
    return {
      id: String(head.DeliveryDocument),
      supplier: text(head.Supplier),
      deliveryDate: fromSapDate(head.DeliveryDate),
      quantity: quantities.length && quantities.every((q) => q !== null) ? addDecimals(quantities as string[]) : null,
    };
  }

  async findPushed(doc: ErpDoc, signal: AbortSignal): Promise<string | null> {
    if (doc.kind === 'invoice') {
      const pairs: [string, string][] = [['SupplierInvoiceIDByInvcgParty', doc.invoiceNumber]];
      if (doc.supplierId) pairs.push(['InvoicingParty', doc.supplierId]);
      const path =
        `${SAP_SERVICES.supplierInvoice}/A_SupplierInvoice` +
        query({ $filter: odataEquals(pairs), $select: 'SupplierInvoice,FiscalYear' });
      const [hit] = results(expectOk(await this.client.once({ method: 'GET', path }, signal)));
      return hit ? String(hit.SupplierInvoice) : null;
    }
    const path =
      `${SAP_SERVICES.outboundDelivery}/A_OutbDeliveryHeader` +
      query({ $filter: odataEquals([['DeliveryDocumentBySupplier', doc.reference]]), $select: 'DeliveryDocument' });
    const [hit] = results(expectOk(await this.client.once({ method: 'GET', path }, signal)));
    return hit ? String(hit.DeliveryDocument) : null;
  }

  async create(doc: ErpDoc, signal: AbortSignal): Promise<string> {
    if (doc.kind === 'invoice') {
      const created = entity(
        await this.write(SAP_SERVICES.supplierInvoice, 'A_SupplierInvoice', sapInvoicePayload(doc), signal),
      );
      return String(created.SupplierInvoice);
    }
    const created = entity(
      await this.write(SAP_SERVICES.outboundDelivery, 'A_OutbDeliveryHeader', sapDeliveryPayload(doc), signal),
    );
    return String(created.DeliveryDocument);
  }

  /**
   * C2: a write carries an x-csrf-token fetched (with the session cookies it belongs to) just before;
   * a 403 that answers `x-csrf-token: Required` fetches a fresh one once and writes again.
   */
  private async write(service: string, set: string, payload: unknown, signal: AbortSignal): Promise<ErpResponse> {
    for (let attempt = 0; ; attempt++) {
      const csrf = await this.fetchCsrf(service, signal);
      const res = await this.client.once(
        {
          method: 'POST',
          path: `${service}/${set}`,
          headers: { 'x-csrf-token': csrf.token, ...(csrf.cookie ? { Cookie: csrf.cookie } : {}) },
          body: payload,
        },
        signal,
      );
      const required = String(res.headers['x-csrf-token'] ?? '').toLowerCase() === 'required';
      if (res.status === 403 && required && attempt === 0) continue;
      return expectOk(res);
    }
  }

  private async fetchCsrf(service: string, signal: AbortSignal): Promise<{ token: string; cookie: string }> {
    const res = expectOk(
      await this.client.once({ method: 'GET', path: `${service}/`, headers: { 'x-csrf-token': 'Fetch' } }, signal),
    );
    const token = res.headers['x-csrf-token'];
    if (typeof token !== 'string' || !token || token.toLowerCase() === 'required') {
      throw new ErpHttpError(502, 'SAP answered without an x-csrf-token', null);
    }
    const cookie = (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    return { token, cookie };
  }
}

/** A_SupplierInvoice with its purchase-order items (deep insert), amounts as decimal strings. */
export function sapInvoicePayload(doc: InvoiceDoc): Record<string, unknown> {
  const date = toSapDate(doc.issueDate);
  return {
    SupplierInvoiceIDByInvcgParty: doc.invoiceNumber,
    InvoicingParty: doc.supplierId ?? undefined,
    DocumentDate: date ?? undefined,
    PostingDate: date ?? undefined,
    DocumentCurrency: doc.currency ?? undefined,
    InvoiceGrossAmount: doc.gross ?? undefined,
    to_SuplrInvcItemPurOrdRef: {
      results: doc.lines.map((l, i) => ({
        SupplierInvoiceItem: String(i + 1),
        PurchaseOrder: doc.orderRef ?? undefined,
        PurchaseOrderItem: l.orderItem ?? String((i + 1) * 10),
        DocumentCurrency: doc.currency ?? undefined,
        SupplierInvoiceItemAmount: l.amount ?? undefined,
        QuantityInPurchaseOrderUnit: l.quantity ?? undefined,
        SupplierInvoiceItemText: l.description ?? undefined,
      })),
    },
  };
}

export function sapDeliveryPayload(doc: NominationDoc): Record<string, unknown> {
  return {
    DeliveryDocumentBySupplier: doc.reference,
    Supplier: doc.supplierId ?? undefined,
    PlannedGoodsIssueDate: toSapDate(doc.deliveryDate) ?? undefined,
    to_DeliveryDocumentItem: {
      results: [
        {
          Material: doc.product ?? undefined,
          ActualDeliveryQuantity: doc.quantity ?? undefined,
          DeliveryQuantityUnit: doc.unit ?? undefined,
          ReferenceSDDocument: doc.nominationRef ?? undefined,
        },
      ],
    },
  };
}
