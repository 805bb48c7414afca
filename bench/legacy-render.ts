import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, type PDFFont, type PDFName, type PDFPage } from 'pdf-lib';
import { GlyphCache, wrap } from '../src/sdf/producer/layout/glyphs.js';

const require = createRequire(import.meta.url);
const PAGE = { width: 595.28, height: 841.89, margin: 56 };
const SIZE = { title: 18, body: 10 };
const LEADING = 14;
const INDENT = 14;
const TITLE_COLOR = '0 0 0 rg';
const BODY_COLOR = '0.1 0.1 0.1 rg';

let fontBytes: Promise<Buffer> | undefined;

/** Rule 2 / F8: the font is embedded, taken from the DejaVu npm package, so the PDF renders offline. */
function loadFont(): Promise<Buffer> {
  fontBytes ??= readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));
  return fontBytes;
}

/**
 * The body font, subset, ligatures off, as the layouts embed it (layout/glyphs.ts) but parsed anew for
 * each document, as the old renderer did; glyph codes, widths and wrapping are the layouts' own.
 */
export async function embedFont(doc: PDFDocument): Promise<PDFFont> {
  doc.registerFontkit(fontkit);
  return doc.embedFont(await loadFont(), { subset: true, features: { liga: false } });
}

export interface Line {
  text: string;
  indent: number;
}

const humanize = (key: string): string => key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

function isMoney(value: unknown): value is { amount: unknown; currency: unknown } {
  return typeof value === 'object' && value !== null && 'amount' in value && 'currency' in value;
}

/**
 * Every field of data.json as a line, in document order (SDF_FORMAT 5, step 3: all fields visually
 * represented). Iterative, so data nested deeper than the call stack renders too.
 */
export function linesOf(data: Record<string, unknown>): Line[] {
  const out: Line[] = [];
  const stack: { value: unknown; label: string; indent: number }[] = [{ value: data, label: '', indent: 0 }];
  while (stack.length > 0) {
    const { value, label, indent } = stack.pop()!;
    if (isMoney(value)) {
      out.push({ text: `${label}: ${String(value.amount)} ${String(value.currency)}`, indent });
    } else if (Array.isArray(value)) {
      out.push({ text: `${label}:`, indent });
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], label: `${i + 1}.`, indent: indent + 1 });
    } else if (typeof value === 'object' && value !== null) {
      if (label !== '') out.push({ text: `${label}:`, indent });
      const childIndent = label === '' ? indent : indent + 1;
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ value: entries[i]![1], label: humanize(entries[i]![0]), indent: childIndent });
      }
    } else {
      out.push({ text: `${label}: ${value === null ? '' : String(value)}`, indent });
    }
  }
  return out;
}

function title(data: Record<string, unknown>): string {
  const type = typeof data.document_type === 'string' ? humanize(data.document_type) : 'Document';
  const numberKey = Object.keys(data).find((k) => /_(number|no|id)$/.test(k) && typeof data[k] === 'string');
  return numberKey ? `${type} ${String(data[numberKey])}` : type;
}

/**
 * One page's text as a content stream written directly: a single text object, each line placed by
 * `Td` from the one before, font and colour set only when they change. pdf-lib's drawText wraps every
 * line in a text object and graphics state of its own: three times the bytes and objects.
 */
class PageText {
  private readonly ops = ['BT'];
  private x = 0;
  private y = 0;
  private state = '';

  constructor(
    private readonly page: PDFPage,
    private readonly fontKey: PDFName,
  ) {}

  line(hex: string, x: number, y: number, size: number, color: string): void {
    const state = `${this.fontKey.asString()} ${size} Tf ${color}`;
    if (state !== this.state) this.ops.push((this.state = state));
    this.ops.push(`${num(x - this.x)} ${num(y - this.y)} Td <${hex}> Tj`);
    this.x = x;
    this.y = y;
  }

  finish(): void {
    this.ops.push('ET');
    const context = this.page.doc.context;
    this.page.node.addContentStream(context.register(context.flateStream(this.ops.join('\n'))));
  }
}

const num = (value: number): string => String(Math.round(value * 100) / 100);

/**
 * The producer's visual.pdf before the document layouts: every field of data.json as a `Key: value`
 * line. Kept here, outside the service, only as the bench's baseline (bench/render.ts).
 */
export async function legacyRender(data: Record<string, unknown>): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await embedFont(doc);
  const glyphs = new GlyphCache(font);
  const heading = title(data);
  doc.setTitle(heading);
  const lines = linesOf(data);

  let text: PageText | undefined;
  let y = 0;
  const newPage = (): PageText => {
    text?.finish();
    const page = doc.addPage([PAGE.width, PAGE.height]);
    y = PAGE.height - PAGE.margin;
    return new PageText(page, page.node.newFontDictionary(font.name, font.ref));
  };
  text = newPage();
  text.line(glyphs.encode(heading), PAGE.margin, y, SIZE.title, TITLE_COLOR);
  y -= LEADING * 2;
  const measure = (s: string): number => glyphs.width(s, SIZE.body);
  for (const line of lines) {
    const x = PAGE.margin + line.indent * INDENT;
    // Deep nesting still leaves a tenth of the page for the text.
    const width = Math.max(PAGE.width - PAGE.margin - x, (PAGE.width - 2 * PAGE.margin) / 10);
    for (const piece of wrap(line.text, width, measure)) {
      if (y < PAGE.margin) text = newPage();
      text.line(glyphs.encode(piece), Math.min(x, PAGE.width - PAGE.margin - width), y, SIZE.body, BODY_COLOR);
      y -= LEADING;
    }
  }
  text.finish();
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}
