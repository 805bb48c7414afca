import { AppError } from '../../common/errors.js';
import { toDecimalString } from './decimal.js';

/** What the connectors read from an invoice's data.json (docs/connectors.md lists the fields). */
export interface InvoiceLine {
  description: string | null;
  quantity: string | null;
  unitPrice: string | null;
  amount: string | null;
  /** The purchase order item this line bills, when data.json names it. */
  orderItem: string | null;
}

export interface InvoiceDoc {
  kind: 'invoice';
  invoiceNumber: string;
  orderRef: string | null;
  issueDate: string | null;
  supplierId: string | null;
  supplierName: string | null;
  currency: string | null;
  net: string | null;
  gross: string | null;
  lines: InvoiceLine[];
}

export interface NominationDoc {
  kind: 'nomination';
  nominationRef: string | null;
  /** The nomination's own number: the reference under which it is pushed (and looked up). */
  reference: string;
  supplierId: string | null;
  supplierName: string | null;
  deliveryDate: string | null;
  quantity: string | null;
  unit: string | null;
  product: string | null;
}

export type ErpDoc = InvoiceDoc | NominationDoc;

/** An ERP document as the match compares it (amounts and quantities as decimal strings). */
export interface ErpOrder {
  id: string;
  supplier: string | null;
  currency: string | null;
  net: string | null;
  lines: { item: string; description: string | null; quantity: string | null; unitPrice: string | null }[];
}

export interface ErpDelivery {
  id: string;
  supplier: string | null;
  deliveryDate: string | null;
  quantity: string | null;
}

const str = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const amountOf = (v: unknown): string | null =>
  toDecimalString(obj(v).amount ?? (typeof v === 'string' ? v : undefined));

/** data.json of a valid document as the connectors' model; a document of another type cannot be matched or pushed. */
export function toErpDoc(documentType: string | null, data: unknown): ErpDoc {
  const d = obj(data);
  const type = documentType ?? str(d.document_type);
  const issuer = obj(d.issuer);
  const supplier = obj(d.supplier);
  const supplierId = str(d.supplier_id) ?? str(supplier.id) ?? str(issuer.id);
  const supplierName = str(supplier.name) ?? str(issuer.name) ?? (typeof d.issuer === 'string' ? d.issuer : null);
  if (type === 'invoice') {
    const totals = obj(d.totals);
    const invoiceNumber = str(d.invoice_number);
    if (!invoiceNumber) {
      throw AppError.invalidState('The invoice has no invoice_number to reference it by in the ERP');
    }
    const lines = Array.isArray(d.line_items) ? d.line_items : [];
    return {
      kind: 'invoice',
      invoiceNumber,
      orderRef: str(d.order_ref),
      issueDate: str(d.issue_date),
      supplierId,
      supplierName,
      currency: str(d.currency) ?? str(obj(totals.gross).currency) ?? str(obj(totals.net).currency),
      net: amountOf(totals.net),
      gross: amountOf(totals.gross),
      lines: lines.map((raw) => {
        const l = obj(raw);
        return {
          description: str(l.description),
          quantity: toDecimalString(l.quantity),
          unitPrice: amountOf(l.unit_price),
          amount: amountOf(l.subtotal ?? l.amount),
          orderItem: str(l.order_item),
        };
      }),
    };
  }
  if (type === 'nomination') {
    const reference = str(d.nomination_number) ?? str(d.nomination_ref);
    if (!reference) throw AppError.invalidState('The nomination has no nomination_number or nomination_ref');
    const quantity = obj(d.quantity);
    return {
      kind: 'nomination',
      nominationRef: str(d.nomination_ref),
      reference,
      supplierId,
      supplierName,
      deliveryDate: str(d.delivery_date),
      quantity: toDecimalString(quantity.value ?? d.quantity),
      unit: str(quantity.unit) ?? str(d.unit),
      product: str(d.product),
    };
  }
  throw AppError.invalidState(`Documents of type ${type ?? 'unknown'} have no ERP counterpart (invoice, nomination)`);
}

/** The ERP side of a connector (one per erp_type). Every method is one attempt; callers add retries. */
export interface ErpAdapter {
  /** Which supplier value the ERP's documents carry (see match.ts). */
  readonly supplierKey: 'id' | 'name';
  /** A light authenticated call (SAP: a service's $metadata; Oracle: a one-row query). */
  healthCheck(signal: AbortSignal): Promise<void>;
  findOrder(ref: string, signal: AbortSignal): Promise<ErpOrder | null>;
  findDelivery(ref: string, signal: AbortSignal): Promise<ErpDelivery | null>;
  /** The ERP id of a document already created from this SDF document (looked up by its reference). */
  findPushed(doc: ErpDoc, signal: AbortSignal): Promise<string | null>;
  create(doc: ErpDoc, signal: AbortSignal): Promise<string>;
}
