import { decimalEquals } from './decimal.js';
import type { ErpDelivery, ErpOrder, InvoiceDoc, NominationDoc } from './model.js';

export interface Difference {
  field: string;
  sdf: string | null;
  erp: string | null;
}

/** Which supplier value the ERP keeps on its documents: SAP a supplier number, Oracle the supplier's name. */
export type SupplierKey = 'id' | 'name';

function compareText(out: Difference[], field: string, sdf: string | null, erp: string | null): void {
  if (sdf !== null && sdf !== erp) out.push({ field, sdf, erp });
}

/** Quantities and amounts compare as decimal values of their strings ("50" equals "50.000"), never as floats. */
function compareDecimal(out: Difference[], field: string, sdf: string | null, erp: string | null): void {
  if (sdf !== null && (erp === null || !decimalEquals(sdf, erp))) out.push({ field, sdf, erp });
}

/**
 * An invoice against its purchase order: supplier, currency, net total and each line's quantity and
 * unit price. A line names its order item (`order_item`) or is paired by position; a line on one side
 * only is a difference of the whole line. Fields the invoice does not state are not compared.
 */
export function compareInvoice(doc: InvoiceDoc, order: ErpOrder, supplierKey: SupplierKey): Difference[] {
  const out: Difference[] = [];
  compareText(out, 'supplier', supplierKey === 'id' ? doc.supplierId : doc.supplierName, order.supplier);
  compareText(out, 'currency', doc.currency, order.currency);
  compareDecimal(out, 'totals.net', doc.net, order.net);
  const used = new Set<number>();
  doc.lines.forEach((line, i) => {
    let index = line.orderItem === null ? i : order.lines.findIndex((l) => l.item === line.orderItem);
    if (index >= order.lines.length) index = -1;
    const erp = index >= 0 ? order.lines[index] : undefined;
    if (!erp) {
      out.push({ field: `line_items[${i}]`, sdf: line.description ?? line.orderItem ?? String(i + 1), erp: null });
      return;
    }
    used.add(index);
    compareDecimal(out, `line_items[${i}].quantity`, line.quantity, erp.quantity);
    compareDecimal(out, `line_items[${i}].unit_price`, line.unitPrice, erp.unitPrice);
  });
  order.lines.forEach((l, index) => {
    if (!used.has(index)) out.push({ field: `line_items[${index}]`, sdf: null, erp: l.description ?? l.item });
  });
  return out;
}

export function compareNomination(doc: NominationDoc, delivery: ErpDelivery, supplierKey: SupplierKey): Difference[] {
  const out: Difference[] = [];
  compareText(out, 'supplier', supplierKey === 'id' ? doc.supplierId : doc.supplierName, delivery.supplier);
  compareText(out, 'delivery_date', doc.deliveryDate, delivery.deliveryDate);
  compareDecimal(out, 'quantity', doc.quantity, delivery.quantity);
  return out;
}
