import { buildZip, type RawZipEntry } from './zip-builder.js';
import { blankPdf } from './pdf-builder.js';

export const INVOICE_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://example.test/schemas/invoice/v0.1.json',
  type: 'object',
  required: ['document_type', 'invoice_number', 'issue_date', 'totals'],
  properties: {
    document_type: { type: 'string', const: 'invoice' },
    invoice_number: { type: 'string', minLength: 1 },
    issue_date: { type: 'string', format: 'date' },
    issuer: { $ref: '#/$defs/party' },
    line_items: { type: 'array', items: { $ref: '#/$defs/line_item' } },
    totals: {
      type: 'object',
      required: ['gross'],
      properties: { net: { $ref: '#/$defs/money' }, vat: { $ref: '#/$defs/money' }, gross: { $ref: '#/$defs/money' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
  $defs: {
    money: {
      type: 'object',
      required: ['amount', 'currency'],
      properties: { amount: { type: 'string' }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
      additionalProperties: false,
    },
    party: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, id: { type: 'string' } } },
    line_item: {
      type: 'object',
      required: ['description', 'quantity', 'subtotal'],
      properties: {
        description: { type: 'string' },
        quantity: { type: 'number' },
        subtotal: { $ref: '#/$defs/money' },
      },
    },
  },
} as const;

export function invoiceData(): Record<string, unknown> {
  return {
    document_type: 'invoice',
    invoice_number: 'INV-2026-00142',
    issue_date: '2026-03-15',
    issuer: { name: 'Acme Supplies GmbH', id: 'DE123456789' },
    line_items: [
      { description: 'Industrial valve Type-A', quantity: 50, subtotal: { amount: '1200.00', currency: 'EUR' } },
      { description: 'Gasket set', quantity: 50, subtotal: { amount: '240.00', currency: 'EUR' } },
    ],
    totals: {
      net: { amount: '1440.00', currency: 'EUR' },
      vat: { amount: '273.60', currency: 'EUR' },
      gross: { amount: '1713.60', currency: 'EUR' },
    },
  };
}

export function invoiceMeta(): Record<string, unknown> {
  return {
    sdf_version: '0.1',
    document_id: 'f47ac10b-58cc-4372-a567-0e02b2c3d479',
    issuer: 'Acme Supplies GmbH',
    issuer_id: 'DE123456789',
    created_at: '2026-03-15T14:30:00+01:00',
    document_type: 'invoice',
    schema_id: 'invoice/v0.1',
  };
}

export interface BuildSdfOptions {
  meta?: unknown;
  data?: unknown;
  schema?: unknown;
  pdf?: Buffer;
  /** Replace an entry's raw bytes, or drop it with null. */
  entries?: Record<string, Buffer | null>;
  /** Entries appended after the standard ones (vendor files, hostile names, ...). */
  extra?: RawZipEntry[];
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value, null, 2), 'utf8');

/** Fixture builder: a valid invoice archive unless told otherwise. */
export function buildSdf(options: BuildSdfOptions = {}): Buffer {
  const standard: Record<string, Buffer> = {
    'visual.pdf': options.pdf ?? blankPdf(),
    'data.json': json(options.data ?? invoiceData()),
    'schema.json': json(options.schema ?? INVOICE_SCHEMA),
    'meta.json': json(options.meta ?? invoiceMeta()),
  };
  const entries: RawZipEntry[] = [];
  for (const [name, data] of Object.entries({ ...standard, ...options.entries })) {
    if (data !== null) entries.push({ name, data });
  }
  return buildZip([...entries, ...(options.extra ?? [])]);
}
