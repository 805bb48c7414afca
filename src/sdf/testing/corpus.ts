import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PDFDocument, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';
import { pack } from '../producer/pack.js';
import { generateKeyPair } from '../signature/keys.js';
import { INVOICE_SCHEMA, buildSdf, invoiceData, invoiceMeta } from './build-sdf.js';
import { actionPdf } from './pdf-actions.js';
import { signWithManifest } from './sign-manifest.js';
import { blankPdf, buildPdf, hiddenObjectPdf } from './pdf-builder.js';
import { buildZip, deflateBomb } from './zip-builder.js';

/** One file of a corpus: a name that says what it is, and its bytes. */
export interface CorpusFile {
  name: string;
  bytes: Buffer;
}

/** The test invoice with `items` line items; about 190 bytes of data.json per item. */
export function invoiceWith(items: number): Record<string, unknown> {
  const data = invoiceData();
  data.line_items = Array.from({ length: items }, (_, i) => ({
    description: `Industrial valve Type-A, batch ${i}, stainless steel, DN50 PN16`,
    quantity: 1 + (i % 50),
    subtotal: { amount: `${(i * 7.31).toFixed(2)}`, currency: 'EUR' },
  }));
  return data;
}

/**
 * A scanned invoice: one A4 page holding a full-page RGB image of noise (incompressible, as a scan's
 * JPEG or Flate data nearly is), `side` pixels square, so the PDF is about 3 * side^2 bytes.
 */
export async function scannedPdf(side: number): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const pixels = deflateSync(randomBytes(side * side * 3), { level: 1 });
  const image = doc.context.register(
    doc.context.stream(pixels, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: side,
      Height: side,
      ColorSpace: 'DeviceRGB',
      BitsPerComponent: 8,
      Filter: 'FlateDecode',
    }),
  );
  const page = doc.addPage([595.28, 841.89]);
  const name = page.node.newXObject('Scan', image);
  page.pushOperators(
    pushGraphicsState(),
    concatTransformationMatrix(595.28, 0, 0, 841.89, 0, 0),
    drawObject(name),
    popGraphicsState(),
  );
  return Buffer.from(await doc.save());
}

const INVOICE_META = { document_type: 'invoice', issuer: 'Acme Supplies GmbH', issuer_id: 'DE123456789' };

/** A typical invoice (1,850 line items and their rendered PDF: about 70 KB, 100 KB before the document layouts), as the producer writes it. */
export async function typicalInvoice(): Promise<Buffer> {
  return (await pack({ data: invoiceWith(1_850), schema: INVOICE_SCHEMA, meta: INVOICE_META })).archive;
}

/** The typical invoice with a scanned page as its visual layer: about 20 MB. */
export async function scannedInvoice(): Promise<Buffer> {
  return (
    await pack({ data: invoiceWith(450), schema: INVOICE_SCHEMA, meta: INVOICE_META, pdf: await scannedPdf(2_560) })
  ).archive;
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/** A schema whose pattern backtracks for ever on the string the data holds (F6). */
const REGEX_BOMB_SCHEMA = {
  type: 'object',
  properties: { document_type: { type: 'string' }, code: { type: 'string', pattern: '^(a+)+$' } },
};

/**
 * Files valid and hostile, one per rule of the format (F1-F11) and each way a reader can be attacked:
 * every verdict a reader gives must equal the service's. The published test vectors are files of
 * their own (test/vectors) and join this list in the tests.
 */
export async function formatCorpus(): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [
    {
      name: 'valid invoice',
      bytes: (await pack({ data: invoiceData(), schema: INVOICE_SCHEMA, meta: INVOICE_META })).archive,
    },
    { name: 'valid fixture, blank page', bytes: buildSdf() },
    { name: 'sdf_version 0.9 (a warning)', bytes: buildSdf({ meta: { ...invoiceMeta(), sdf_version: '0.9' } }) },
    {
      name: 'vendor entry',
      bytes: buildSdf({ extra: [{ name: 'vendor/acme/notes.txt', data: Buffer.from('hello') }] }),
    },
    // F1: the container
    { name: 'not a ZIP', bytes: Buffer.from('%PDF-1.7 this is not an archive') },
    { name: 'empty file', bytes: Buffer.alloc(0) },
    { name: 'no visual.pdf', bytes: buildSdf({ entries: { 'visual.pdf': null } }) },
    { name: 'no data.json', bytes: buildSdf({ entries: { 'data.json': null } }) },
    { name: 'no schema.json', bytes: buildSdf({ entries: { 'schema.json': null } }) },
    { name: 'no meta.json', bytes: buildSdf({ entries: { 'meta.json': null } }) },
    {
      name: 'path traversal entry',
      bytes: buildSdf({ extra: [{ name: '../../etc/passwd', data: Buffer.from('x') }] }),
    },
    { name: 'absolute entry name', bytes: buildSdf({ extra: [{ name: '/etc/passwd', data: Buffer.from('x') }] }) },
    { name: 'unknown top-level entry', bytes: buildSdf({ extra: [{ name: 'evil.exe', data: Buffer.from('MZ') }] }) },
    { name: 'duplicate entry', bytes: buildSdf({ extra: [{ name: 'data.json', data: json(invoiceData()) }] }) },
    {
      name: 'symlink entry',
      bytes: buildSdf({ extra: [{ name: 'vendor/link', data: Buffer.from('/etc'), unixMode: 0o120777 }] }),
    },
    // F2: limits counted on inflated bytes
    {
      name: 'ZIP bomb (1 GiB of zeros)',
      bytes: buildZip([
        { name: 'visual.pdf', data: blankPdf() },
        { name: 'data.json', data: Buffer.alloc(0), compressed: deflateBomb(1024), declaredSize: 1000 },
        { name: 'schema.json', data: json(INVOICE_SCHEMA) },
        { name: 'meta.json', data: json(invoiceMeta()) },
      ]),
    },
    {
      name: 'entry larger than its header says',
      bytes: buildZip([
        { name: 'visual.pdf', data: blankPdf() },
        { name: 'data.json', data: json(invoiceData()), declaredSize: 10 },
        { name: 'schema.json', data: json(INVOICE_SCHEMA) },
        { name: 'meta.json', data: json(invoiceMeta()) },
      ]),
    },
    // F4, F7: meta.json
    { name: 'meta.json not JSON', bytes: buildSdf({ entries: { 'meta.json': Buffer.from('{nope') } }) },
    { name: 'meta without document_id', bytes: buildSdf({ meta: { ...invoiceMeta(), document_id: undefined } }) },
    { name: 'meta with a bad created_at', bytes: buildSdf({ meta: { ...invoiceMeta(), created_at: 'yesterday' } }) },
    { name: 'sdf_version 1.0', bytes: buildSdf({ meta: { ...invoiceMeta(), sdf_version: '1.0' } }) },
    // F6: schema.json
    { name: 'schema.json not JSON', bytes: buildSdf({ entries: { 'schema.json': Buffer.from('{"type":') } }) },
    { name: 'schema with a remote $ref', bytes: buildSdf({ schema: { $ref: 'https://example.test/evil.json' } }) },
    { name: 'schema with an unknown type', bytes: buildSdf({ schema: { type: 'invoice' } }) },
    {
      name: 'regex-bomb schema',
      bytes: buildSdf({ schema: REGEX_BOMB_SCHEMA, data: { document_type: 'invoice', code: `${'a'.repeat(40)}!` } }),
    },
    // F5: data.json
    { name: 'data.json not JSON', bytes: buildSdf({ entries: { 'data.json': Buffer.from('{"a": tru}') } }) },
    { name: 'data with a reserved key', bytes: buildSdf({ data: { ...invoiceData(), document_id: 'x' } }) },
    {
      name: 'amount as a number',
      bytes: buildSdf({ data: { ...invoiceData(), totals: { gross: { amount: 1713.6, currency: 'EUR' } } } }),
    },
    {
      name: 'currency that is not ISO 4217',
      bytes: buildSdf({ data: { ...invoiceData(), totals: { gross: { amount: '1.00', currency: 'EURO' } } } }),
    },
    {
      name: 'data with a NUL character',
      bytes: buildSdf({ entries: { 'data.json': Buffer.from('{"document_type":"invoice","x":"a\\u0000b"}') } }),
    },
    {
      name: 'data with a lone surrogate',
      bytes: buildSdf({ entries: { 'data.json': Buffer.from('{"document_type":"invoice","x":"\\ud800"}') } }),
    },
    {
      name: 'data nested 10000 levels',
      bytes: buildSdf({ entries: { 'data.json': Buffer.from(`{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`) } }),
    },
    {
      name: 'data that does not match its schema',
      bytes: buildSdf({ data: { ...invoiceData(), invoice_number: 42 } }),
    },
    // F8: visual.pdf
    { name: 'visual.pdf not a PDF', bytes: buildSdf({ pdf: Buffer.from('GIF89a') }) },
    {
      name: 'PDF with JavaScript',
      bytes: buildSdf({ pdf: blankPdf('/OpenAction 5 0 R', '<< >>', ['<< /S /JavaScript /JS (app.alert(1)) >>']) }),
    },
    {
      name: 'PDF with a launch action',
      bytes: buildSdf({ pdf: blankPdf('/OpenAction 5 0 R', '<< >>', ['<< /S /Launch /F (calc.exe) >>']) }),
    },
    { name: 'PDF with a hidden JavaScript object', bytes: buildSdf({ pdf: hiddenObjectPdf('stream') }) },
    {
      name: 'PDF with an external font reference',
      bytes: buildSdf({
        pdf: buildPdf([
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
          '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> >>',
          '<< /Type /Font /Subtype /TrueType /BaseFont /Arial >>',
        ]),
      }),
    },
    // F8: what a PDF does by itself: valid, with warnings (compressed in object streams, as producers write)
    {
      name: 'PDF that contacts an address when opened',
      bytes: buildSdf({ pdf: await actionPdf({ openActionUri: 'https://tracker.example/open.gif?id=7' }) }),
    },
    {
      name: 'PDF whose page contacts an address when shown',
      bytes: buildSdf({ pdf: await actionPdf({ pageOpenUri: 'https://pixel.example/p' }) }),
    },
    {
      name: 'PDF with an embedded file',
      bytes: buildSdf({
        pdf: await actionPdf({
          embeddedFile: { name: 'factur-x.xml', bytes: Buffer.from('<Invoice/>'), mimeType: 'text/xml' },
        }),
      }),
    },
    {
      name: 'PDF with a link a person clicks',
      bytes: buildSdf({ pdf: await actionPdf({ linkUri: 'https://example.com/terms' }) }),
    },
    // F9: signatures
    {
      name: 'signature.sig that is not a JWS',
      bytes: buildSdf({ extra: [{ name: 'signature.sig', data: Buffer.from('{}') }] }),
    },
    {
      name: 'signature whose signed_at is markup',
      bytes: await signWithManifest(buildSdf(), generateKeyPair('ECDSA-P256').privateKeyPem, { signed_at: '<b>x</b>' }),
    },
  ];
  return files;
}
