import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { upload, waitForFinal } from './documents.js';
import type { Credentials, ErpStandIn } from './erp-standin.js';
import { OracleStandIn } from './oracle-standin.js';
import { SapStandIn } from './sap-standin.js';
import { buildSdf } from './sdf-fixtures.js';

export type ErpType = 'SAP' | 'ORACLE';
export type AuthType = 'basic' | 'bearer' | 'oauth2';
export const ERP_TYPES: ErpType[] = ['SAP', 'ORACLE'];
export const AUTH_TYPES: AuthType[] = ['basic', 'bearer', 'oauth2'];
export const COMBINATIONS = ERP_TYPES.flatMap((erp) => AUTH_TYPES.map((auth) => [erp, auth] as [ErpType, AuthType]));

export const ORDER_REF = '4500000142';
export const SUPPLIER_ID = '17300001';
export const SUPPLIER_NAME = 'Acme Supplies GmbH';

/** Secrets distinctive enough that finding them anywhere in a row or a body is certain. */
export function secretsFor(auth: AuthType): Credentials {
  const s = () => randomBytes(12).toString('hex');
  switch (auth) {
    case 'basic':
      return { auth_type: 'basic', username: `user-${s()}`, password: `pw-${s()}` };
    case 'bearer':
      return { auth_type: 'bearer', token: `bearer-${s()}` };
    case 'oauth2':
      return { auth_type: 'oauth2', client_id: `client-${s()}`, client_secret: `secret-${s()}` };
  }
}

/** The stand-in for an ERP with the purchase order the invoices refer to, agreeing with them. */
export async function startStandIn(erp: ErpType, credentials: Credentials): Promise<ErpStandIn> {
  if (erp === 'SAP') {
    const sap = new SapStandIn(credentials);
    sap.orders.set(ORDER_REF, {
      PurchaseOrder: ORDER_REF,
      Supplier: SUPPLIER_ID,
      DocumentCurrency: 'EUR',
      items: [
        {
          PurchaseOrderItem: '10',
          PurchaseOrderItemText: 'Industrial valve Type-A',
          OrderQuantity: '50.000',
          NetPriceAmount: '24.00',
        },
        {
          PurchaseOrderItem: '20',
          PurchaseOrderItemText: 'Gasket set',
          OrderQuantity: '50.000',
          NetPriceAmount: '4.80',
        },
      ],
    });
    return sap.start();
  }
  const oracle = new OracleStandIn(credentials);
  oracle.orders.set(ORDER_REF, {
    OrderNumber: ORDER_REF,
    Supplier: SUPPLIER_NAME,
    CurrencyCode: 'EUR',
    Ordered: 1440,
    lines: [
      { LineNumber: 1, Description: 'Industrial valve Type-A', Quantity: 50, Price: 24 },
      { LineNumber: 2, Description: 'Gasket set', Quantity: 50, Price: 4.8 },
    ],
  });
  return oracle.start();
}

/** What POST /connectors/configure takes for a stand-in and its accepted credentials. */
export function configureBody(erp: ErpType, standIn: ErpStandIn, creds: Credentials): Record<string, unknown> {
  const { auth_type, ...rest } = creds;
  const credentials = auth_type === 'oauth2' ? { ...rest, token_url: standIn.tokenUrl, scope: 'erp.write' } : rest;
  return { erp_type: erp, name: `${erp} ${auth_type}`, base_url: standIn.url, auth_type, credentials };
}

export function invoiceData(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    document_type: 'invoice',
    invoice_number: `INV-${randomBytes(4).toString('hex')}`,
    order_ref: ORDER_REF,
    issue_date: '2026-03-15',
    issuer: { name: SUPPLIER_NAME, id: SUPPLIER_ID },
    line_items: [
      {
        description: 'Industrial valve Type-A',
        quantity: 50,
        unit_price: { amount: '24.00', currency: 'EUR' },
        subtotal: { amount: '1200.00', currency: 'EUR' },
      },
      {
        description: 'Gasket set',
        quantity: 50,
        unit_price: { amount: '4.80', currency: 'EUR' },
        subtotal: { amount: '240.00', currency: 'EUR' },
      },
    ],
    totals: {
      net: { amount: '1440.00', currency: 'EUR' },
      vat: { amount: '273.60', currency: 'EUR' },
      gross: { amount: '1713.60', currency: 'EUR' },
    },
    ...overrides,
  };
}

const OPEN_SCHEMA = { type: 'object', required: ['document_type'] };

/** Uploads an invoice and waits until it is judged; returns the record id. */
export async function validInvoice(t: TestApp, apiKey: string, data = invoiceData()): Promise<string> {
  const { archive } = await buildSdf({ data, schema: OPEN_SCHEMA });
  const res = await upload(t, apiKey, archive).expect(201);
  const final = await waitForFinal(t, apiKey, res.body.id as string);
  expect(final.body.status).toBe('valid');
  return res.body.id as string;
}

/** Polls GET /connectors/pushes/:id until the push is settled. */
export async function waitForPush(t: TestApp, apiKey: string, pushId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.http().get(`/connectors/pushes/${pushId}`).set('X-API-Key', apiKey).expect(200);
    if (res.body.status === 'succeeded' || res.body.status === 'failed') return res.body as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`push ${pushId} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The documents an ERP stand-in holds for an invoice number. */
export function erpInvoices(standIn: ErpStandIn, invoiceNumber: string): Record<string, unknown>[] {
  if (standIn instanceof SapStandIn)
    return standIn.invoices.filter((i) => i.SupplierInvoiceIDByInvcgParty === invoiceNumber);
  return (standIn as OracleStandIn).invoices.filter((i) => i.InvoiceNumber === invoiceNumber);
}

/** The create requests (POSTs of invoices) a stand-in has seen. */
export function invoiceCreates(standIn: ErpStandIn): number {
  return standIn.requests.filter((r) => r.method === 'POST' && /A_SupplierInvoice$|\/invoices$/.test(r.path)).length;
}

export const isInvoiceCreate = (r: { method: string; path: string }) =>
  r.method === 'POST' && /A_SupplierInvoice$|\/invoices$/.test(r.path);
