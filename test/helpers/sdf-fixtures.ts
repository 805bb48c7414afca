import { randomBytes, randomUUID } from 'node:crypto';
import { generateKeyPair, pack, signArchive, type SignatureAlgorithm } from '../../src/sdf/index.js';
import {
  buildSdf as buildRawSdf,
  INVOICE_SCHEMA,
  invoiceData,
  invoiceMeta,
  type BuildSdfOptions,
} from '../../src/sdf/testing/build-sdf.js';
import { blankPdf } from '../../src/sdf/testing/pdf-builder.js';

export interface SdfFixtureOptions {
  documentType?: string;
  data?: Record<string, unknown>;
  schema?: Record<string, unknown>;
  schemaId?: string;
  /** visual.pdf; a small blank page unless given (rendering is not what these tests are about). */
  pdf?: Buffer;
  /** Incompressible padding under vendor/, to reach a file size. */
  paddingBytes?: number;
  /** Sign the packed file with a fresh key of this algorithm. */
  sign?: SignatureAlgorithm;
}

/** A valid SDF file made by the format core's producer, pack(), so it is exactly what producers write. */
export async function buildSdf(options: SdfFixtureOptions = {}): Promise<{ archive: Buffer; documentId: string }> {
  const documentType = options.documentType ?? 'invoice';
  const data = options.data ?? (documentType === 'invoice' ? invoiceData() : { document_type: documentType });
  const schema =
    options.schema ??
    (documentType === 'invoice'
      ? (INVOICE_SCHEMA as unknown as Record<string, unknown>)
      : { type: 'object', required: ['document_type'], properties: { document_type: { type: 'string' } } });
  const { archive, meta } = await pack({
    data,
    schema,
    meta: {
      document_type: documentType,
      issuer: 'Acme Supplies GmbH',
      issuer_id: 'DE123456789',
      schema_id: options.schemaId ?? `${documentType}/v1`,
    },
    pdf: options.pdf ?? blankPdf(),
    vendor: options.paddingBytes ? { 'padding.bin': randomBytes(options.paddingBytes) } : undefined,
  });
  const signed = options.sign
    ? await signArchive(archive, { privateKeyPem: generateKeyPair(options.sign).privateKeyPem })
    : archive;
  return { archive: signed, documentId: meta.document_id! };
}

/** A ZIP that passes the upload's partial read (meta.json is fine) but fails validation: data breaks the schema. */
export function buildInvalidSdf(options: BuildSdfOptions = {}): Buffer {
  return buildRawSdf({
    meta: { ...invoiceMeta(), document_id: randomUUID() },
    data: { ...invoiceData(), invoice_number: 42 },
    ...options,
  });
}

export { buildRawSdf, invoiceMeta };
