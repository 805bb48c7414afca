import { deflateSync } from 'node:zlib';
import type { PDFDocument, PDFFont, PDFName, PDFPage } from 'pdf-lib';
import { GlyphCache } from './glyphs.js';

/** A4 portrait, in points. */
export const PAGE = { width: 595.28, height: 841.89 };

export type Tone = 'ink' | 'muted' | 'accent';

const TONES: Record<Tone, string> = {
  ink: '0.11 0.11 0.13',
  muted: '0.38 0.4 0.44',
  accent: '0.09 0.25 0.45',
};

export interface TextStyle {
  size: number;
  bold?: boolean;
  tone?: Tone;
}

const num = (value: number): string => String(Math.round(value * 100) / 100);

/**
 * One page's content, written as operators directly: the drawing (rules, shading) first, then a single
 * text object in which each piece is placed by `Td` from the one before and font, colour and weight are
 * set only when they change. pdf-lib's drawText gives every piece a text object and graphics state of
 * its own: three times the bytes and objects on a long document.
 */
export class PageCanvas {
  private readonly drawing: string[] = [];
  private readonly text = ['BT'];
  private x = 0;
  private y = 0;
  private state = '';

  constructor(
    readonly page: PDFPage,
    private readonly fontKey: string,
    private readonly glyphs: GlyphCache,
  ) {}

  /**
   * Bold is the regular face filled and stroked with a hairline of the same colour (text rendering
   * mode 2): one embedded font serves every weight, and extracted text is unchanged.
   */
  write(text: string, x: number, y: number, style: TextStyle): void {
    if (text === '') return;
    const tone = TONES[style.tone ?? 'ink'];
    const weight = style.bold ? `${tone} RG 2 Tr ${num(style.size * 0.035)} w` : '0 Tr';
    const state = `${this.fontKey} ${num(style.size)} Tf ${tone} rg ${weight}`;
    if (state !== this.state) this.text.push((this.state = state));
    this.text.push(`${num(x - this.x)} ${num(y - this.y)} Td <${this.glyphs.encode(text)}> Tj`);
    this.x = x;
    this.y = y;
  }

  /** A horizontal rule from x1 to x2 at y. */
  rule(x1: number, x2: number, y: number, width = 0.5, gray = 0.75): void {
    this.drawing.push(`${gray} G ${num(width)} w ${num(x1)} ${num(y)} m ${num(x2)} ${num(y)} l S`);
  }

  /** A filled rectangle (table header shading). */
  shade(x: number, y: number, width: number, height: number, gray = 0.93): void {
    this.drawing.push(`${gray} g ${num(x)} ${num(y)} ${num(width)} ${num(height)} re f`);
  }

  finish(): void {
    const context = this.page.doc.context;
    const ops = this.drawing.length > 0 ? ['q', ...this.drawing, 'Q', ...this.text, 'ET'] : [...this.text, 'ET'];
    // Node's zlib rather than pdf-lib's JavaScript deflate: a third of a long document's time otherwise.
    const stream = context.stream(deflateSync(ops.join('\n')), { Filter: 'FlateDecode' });
    this.page.node.addContentStream(context.register(stream));
  }
}

/** The document's pages and its one embedded font. */
export class Canvas {
  readonly pages: PageCanvas[] = [];
  readonly glyphs: GlyphCache;
  private fontKey: PDFName | undefined;

  constructor(
    private readonly doc: PDFDocument,
    private readonly font: PDFFont,
  ) {
    this.glyphs = new GlyphCache(font);
  }

  addPage(): PageCanvas {
    const page = this.doc.addPage([PAGE.width, PAGE.height]);
    // Every page's resources name the one font object.
    this.fontKey = page.node.newFontDictionary(this.font.name, this.font.ref);
    const canvas = new PageCanvas(page, this.fontKey.asString(), this.glyphs);
    this.pages.push(canvas);
    return canvas;
  }

  width(text: string, size: number): number {
    return this.glyphs.width(text, size);
  }

  finish(): void {
    for (const page of this.pages) page.finish();
  }
}
