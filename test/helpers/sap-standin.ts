import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { ErpStandIn, parseEqualsFilter, type SeenRequest } from './erp-standin.js';

const ROOT = '/sap/opu/odata/sap';
const PO = `${ROOT}/API_PURCHASEORDER_PROCESS_SRV`;
const INV = `${ROOT}/API_SUPPLIERINVOICE_PROCESS_SRV`;
const DLV = `${ROOT}/API_OUTBOUND_DELIVERY_SRV;v=0002`;
const SAP_DATE = /^\/Date\(-?\d+\)\/$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

export interface SapPurchaseOrder {
  PurchaseOrder: string;
  Supplier: string;
  DocumentCurrency: string;
  items: { PurchaseOrderItem: string; PurchaseOrderItemText: string; OrderQuantity: string; NetPriceAmount: string }[];
}

type Row = Record<string, unknown>;

/**
 * SAP S/4HANA as the connectors meet it: OData V2 JSON (`d` wrappers, `/Date(ms)/`, decimal strings),
 * x-csrf-token fetched with `x-csrf-token: Fetch` and bound to the session cookie it comes with,
 * 403 `x-csrf-token: Required` on a write without a valid one, OData error bodies.
 */
export class SapStandIn extends ErpStandIn {
  readonly orders = new Map<string, SapPurchaseOrder>();
  readonly invoices: Row[] = [];
  readonly deliveries: Row[] = [];
  /** session cookie value -> csrf token */
  private readonly csrf = new Map<string, string>();
  private invoiceCounter = 5105600000;
  private deliveryCounter = 80000000;

  protected errorBody(status: number, message: string) {
    return {
      contentType: 'application/json',
      body: { error: { code: `STANDIN/${status}`, message: { lang: 'en', value: message } } },
    };
  }

  protected handle(req: SeenRequest, res: ServerResponse): void {
    const p = req.path;
    if (req.method === 'GET' && req.headers['x-csrf-token'] === 'Fetch') return this.issueCsrf(res);
    if (req.method === 'GET' && p === `${PO}/$metadata`) {
      res.writeHead(200, { 'Content-Type': 'application/xml' });
      res.end('<?xml version="1.0" encoding="utf-8"?><edmx:Edmx Version="1.0"/>');
      return;
    }
    if (req.method === 'GET' && p === `${PO}/A_PurchaseOrder`) return this.listOrders(req, res);
    if (p === `${INV}/A_SupplierInvoice`) {
      if (req.method === 'GET') return this.collection(res, this.filter(this.invoices, req));
      if (req.method === 'POST') return this.write(req, res, () => this.createInvoice(req));
    }
    if (p === `${DLV}/A_OutbDeliveryHeader`) {
      if (req.method === 'GET') return this.collection(res, this.filter(this.deliveries, req));
      if (req.method === 'POST') return this.write(req, res, () => this.createDelivery(req));
    }
    this.fail(res, 404, `Resource not found for segment ${p}`);
  }

  private issueCsrf(res: ServerResponse): void {
    const session = randomBytes(8).toString('hex');
    const token = randomBytes(12).toString('base64');
    this.csrf.set(session, token);
    res.writeHead(200, {
      'x-csrf-token': token,
      'Set-Cookie': [`SAP_SESSIONID_STD_100=${session}; path=/; HttpOnly`, 'sap-usercontext=sap-client=100; path=/'],
      'Content-Type': 'application/json',
    });
    res.end(JSON.stringify({ d: { EntitySets: ['A_SupplierInvoice'] } }));
  }

  private write(req: SeenRequest, res: ServerResponse, create: () => Row): void {
    const session = /SAP_SESSIONID_STD_100=([0-9a-f]+)/.exec(String(req.headers.cookie ?? ''))?.[1];
    const token = req.headers['x-csrf-token'];
    if (!session || !token || this.csrf.get(session) !== token) {
      return this.fail(res, 403, 'CSRF token validation failed', { 'x-csrf-token': 'Required' });
    }
    this.send(res, 201, { d: create() });
  }

  private filter(rows: Row[], req: SeenRequest): Row[] {
    const raw = req.query.get('$filter');
    if (raw === null) return rows;
    const conditions = parseEqualsFilter(raw, 'eq');
    return rows.filter((r) => [...conditions].every(([k, v]) => r[k] === v));
  }

  private listOrders(req: SeenRequest, res: ServerResponse): void {
    const conditions = parseEqualsFilter(req.query.get('$filter') ?? '', 'eq');
    const po = this.orders.get(conditions.get('PurchaseOrder') ?? '');
    const expand = req.query.get('$expand') === 'to_PurchaseOrderItem';
    const rows = po
      ? [
          {
            __metadata: { type: 'API_PURCHASEORDER_PROCESS_SRV.A_PurchaseOrderType' },
            PurchaseOrder: po.PurchaseOrder,
            Supplier: po.Supplier,
            DocumentCurrency: po.DocumentCurrency,
            CreationDate: '/Date(1773532800000)/',
            ...(expand
              ? {
                  to_PurchaseOrderItem: {
                    results: po.items.map((i) => ({
                      PurchaseOrder: po.PurchaseOrder,
                      ...i,
                      NetPriceQuantity: '1',
                      DocumentCurrency: po.DocumentCurrency,
                    })),
                  },
                }
              : {}),
          },
        ]
      : [];
    this.collection(res, rows);
  }

  private collection(res: ServerResponse, rows: Row[]): void {
    this.send(res, 200, { d: { results: rows } });
  }

  private createInvoice(req: SeenRequest): Row {
    const body = JSON.parse(req.body) as Row;
    for (const f of ['DocumentDate', 'PostingDate']) {
      if (body[f] !== undefined && !SAP_DATE.test(String(body[f]))) throw new Error(`${f}: not an Edm.DateTime`);
    }
    if (typeof body.InvoiceGrossAmount !== 'string' || !DECIMAL.test(body.InvoiceGrossAmount)) {
      throw new Error('InvoiceGrossAmount: Edm.Decimal expected as a string');
    }
    const items = (body.to_SuplrInvcItemPurOrdRef as { results?: Row[] } | undefined)?.results ?? [];
    for (const i of items) {
      for (const f of ['SupplierInvoiceItemAmount', 'QuantityInPurchaseOrderUnit']) {
        if (typeof i[f] !== 'string' || !DECIMAL.test(i[f])) throw new Error(`${f}: Edm.Decimal expected as a string`);
      }
    }
    const created = {
      ...body,
      SupplierInvoice: String(++this.invoiceCounter),
      FiscalYear: '2026',
      to_SuplrInvcItemPurOrdRef: { results: items },
    };
    this.invoices.push(created);
    return created;
  }

  private createDelivery(req: SeenRequest): Row {
    const body = JSON.parse(req.body) as Row;
    const created = { ...body, DeliveryDocument: String(++this.deliveryCounter) };
    this.deliveries.push(created);
    return created;
  }
}
