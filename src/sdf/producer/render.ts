import { PDFDocument } from 'pdf-lib';
import type { Block, DocumentLayout } from './layout/blocks.js';
import { Canvas } from './layout/canvas.js';
import { Flow } from './layout/flow.js';
import { formatScalar, humanize, isRecord } from './layout/format.js';
import { embedFont } from './layout/glyphs.js';
import { pick, remainingBlocks } from './layout/generic.js';
import { nominationLayout } from './layout/nomination.js';
import { letterhead } from './layout/parties.js';
import { INVOICE, PURCHASE_ORDER, tradeLayout } from './layout/trade.js';

export { embedFont, GlyphCache, wrap } from './layout/glyphs.js';
export type { DocumentLayout } from './layout/blocks.js';

/**
 * Any other document: its type as the title (with its number when a field looks like one), the
 * issuer's letterhead when there is an issuing party, then every field: plain values as a list,
 * objects as sections of fields, arrays of objects as tables.
 */
function genericLayout(data: Record<string, unknown>): DocumentLayout {
  const type =
    typeof data.document_type === 'string' && data.document_type !== '' ? humanize(data.document_type) : 'Document';
  const shown = new Set<string>(['document_type']);
  const blocks: Block[] = [];
  const issuerKey = pick(data, ['issuer', 'seller', 'sender', 'from']);
  const head = issuerKey !== undefined ? letterhead(data[issuerKey]) : undefined;
  if (head) {
    blocks.push(head);
    shown.add(issuerKey!);
  }
  blocks.push({ kind: 'title', text: type });
  const numberKey = Object.keys(data).find((k) => /_(number|no|id)$/.test(k) && typeof data[k] === 'string');
  blocks.push(...remainingBlocks(data, shown));
  const footer = numberKey ? `${type} ${formatScalar(data[numberKey])}` : type;
  return { title: footer, footer, blocks };
}

/** The layout of a document by its type (SDF_FORMAT 5 step 3: every field of data.json is shown). */
export function layoutFor(data: Record<string, unknown>): DocumentLayout {
  const type = typeof data.document_type === 'string' ? data.document_type.toLowerCase().replace(/[\s-]+/g, '_') : '';
  if (type === 'invoice' || type === 'commercial_invoice') return tradeLayout(data, INVOICE);
  if (type === 'purchase_order' || type === 'order') return tradeLayout(data, PURCHASE_ORDER);
  if (type === 'nomination' || type.endsWith('_nomination')) return nominationLayout(data);
  return genericLayout(data);
}

/**
 * visual.pdf from data.json for producers without a PDF of their own: the document laid out as the
 * business document it is (rule 2: one embedded font, no scripts, no external references).
 */
export async function render(data: Record<string, unknown>): Promise<Buffer> {
  const layout = layoutFor(isRecord(data) ? data : {});
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle(layout.title);
  const canvas = new Canvas(doc, await embedFont(doc));
  new Flow(canvas).render(layout);
  canvas.finish();
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}
