import type { ServerResponse } from 'node:http';
import { ErpStandIn, parseEqualsFilter, type SeenRequest } from './erp-standin.js';

const ROOT = '/fscmRestApi/resources/11.13.18.05';
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

export interface OraclePurchaseOrder {
  OrderNumber: string;
  Supplier: string;
  CurrencyCode: string;
  Ordered: number;
  lines: { LineNumber: number; Description: string; Quantity: number; Price: number }[];
}

type Row = Record<string, unknown>;

/**
 * Oracle Fusion Cloud REST as the connectors meet it: collections `{items, count, hasMore, limit,
 * offset}`, `q=` row filters, `onlyData`, `expand`, dates YYYY-MM-DD, Oracle's error body.
 */
export class OracleStandIn extends ErpStandIn {
  readonly orders = new Map<string, OraclePurchaseOrder>();
  readonly invoices: Row[] = [];
  readonly receipts: Row[] = [];
  private counter = 300000012345000;

  protected errorBody(status: number, message: string) {
    return {
      contentType: 'application/vnd.oracle.adf.error+json',
      body: {
        type: 'http://www.w3.org/Protocols/rfc2616/rfc2616-sec10.html',
        title: status >= 500 ? 'Internal Server Error' : 'Bad Request',
        status: String(status),
        'o:errorDetails': [{ detail: message, 'o:errorCode': `STANDIN-${status}` }],
      },
    };
  }

  protected handle(req: SeenRequest, res: ServerResponse): void {
    const p = req.path;
    if (req.method === 'GET' && p === `${ROOT}/purchaseOrders`) {
      const limit = Number(req.query.get('limit') ?? '25');
      const expand = req.query.get('expand') === 'lines';
      const rows = this.filter(
        [...this.orders.values()].map((o) => ({
          POHeaderId: 300000000000000 + Number(o.OrderNumber.replace(/\D/g, '') || 0),
          ...o,
        })),
        req,
      )
        .slice(0, limit)
        .map((o) => (expand ? o : { ...o, lines: undefined }));
      return this.collection(res, rows);
    }
    if (p === `${ROOT}/invoices`) {
      if (req.method === 'GET') return this.collection(res, this.filter(this.invoices, req));
      if (req.method === 'POST') return this.send(res, 201, this.createInvoice(req));
    }
    if (p === `${ROOT}/receivingReceiptRequests`) {
      if (req.method === 'GET') return this.collection(res, this.filter(this.receipts, req));
      if (req.method === 'POST') {
        const created = { ...(JSON.parse(req.body) as Row), HeaderInterfaceId: ++this.counter };
        this.receipts.push(created);
        return this.send(res, 201, created);
      }
    }
    this.fail(res, 404, `URL ${p} was not found`);
  }

  private filter(rows: Row[], req: SeenRequest): Row[] {
    const q = req.query.get('q');
    if (q === null) return rows;
    const conditions = parseEqualsFilter(q, '=');
    return rows.filter((r) => [...conditions].every(([k, v]) => String(r[k]) === v));
  }

  private collection(res: ServerResponse, rows: Row[]): void {
    this.send(res, 200, { items: rows, count: rows.length, hasMore: false, limit: 25, offset: 0 });
  }

  private createInvoice(req: SeenRequest): Row {
    const body = JSON.parse(req.body) as Row;
    if (typeof body.InvoiceDate !== 'string' || !DATE.test(body.InvoiceDate))
      throw new Error('InvoiceDate: YYYY-MM-DD expected');
    if (typeof body.InvoiceAmount !== 'string' || !DECIMAL.test(body.InvoiceAmount))
      throw new Error('InvoiceAmount: decimal expected');
    const created = { ...body, InvoiceId: ++this.counter };
    this.invoices.push(created);
    return created;
  }
}
