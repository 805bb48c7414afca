import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fontkit from '@pdf-lib/fontkit';
import type { PDFDocument, PDFFont } from 'pdf-lib';

const require = createRequire(import.meta.url);
let fontBytes: Promise<Buffer> | undefined;

/**
 * Rule 2 / F8: the font is embedded, so the PDF renders offline. DejaVu Sans (from the DejaVu npm
 * package, free to embed and redistribute) covers Latin with every European accent, German, Turkish,
 * Greek and Cyrillic.
 */
function loadFont(): Promise<Buffer> {
  fontBytes ??= readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));
  return fontBytes;
}

type Fontkit = typeof fontkit;
const parsed = new WeakMap<Uint8Array, ReturnType<Fontkit['create']>>();

/**
 * fontkit, parsing the font's bytes once per process instead of once per document: parsing was most of
 * the time of a short document. Each document still makes its own subset of the parsed font, which it
 * only reads.
 */
const reusingFontkit: Fontkit = {
  ...fontkit,
  create: (data, postscriptName) => {
    if (postscriptName !== undefined) return fontkit.create(data, postscriptName);
    let font = parsed.get(data);
    if (font === undefined) {
      font = fontkit.create(data);
      parsed.set(data, font);
    }
    return font;
  },
};

/**
 * The body font, subset. Ligatures off: every character keeps a glyph of its own, which makes
 * per-character codes exact (GlyphCache) and keeps copied and extracted text identical to data.json.
 */
export async function embedFont(doc: PDFDocument): Promise<PDFFont> {
  doc.registerFontkit(reusingFontkit);
  return doc.embedFont(await loadFont(), { subset: true, features: { liga: false } });
}

/**
 * Scripts whose characters map one to one onto glyphs once ligatures are off: Latin, Greek, Cyrillic,
 * punctuation and currency signs, but not the spacing modifier letters (tone letters join). Their glyph
 * codes and widths are looked up per character. Shaping each line with fontkit cost a quarter of a
 * millisecond, which made a long invoice take minutes. Other text (combining marks, Arabic, Indic
 * scripts...) is still shaped line by line.
 */
const PER_CHARACTER = /^[\u0020-\u007e\u00a0-\u02af\u0370-\u03ff\u0400-\u04ff\u2000-\u206f\u20a0-\u20cf]*$/;

/** Glyph codes and widths of the embedded font, per character where that is exact (PER_CHARACTER). */
export class GlyphCache {
  private readonly codes = new Map<string, string>();
  private readonly widths = new Map<string, number>();

  constructor(private readonly font: PDFFont) {}

  /** The hex glyph codes of `text` in the font's subset (the operand of `Tj`). */
  encode(text: string): string {
    if (!PER_CHARACTER.test(text)) return this.font.encodeText(text).asString();
    let out = '';
    for (const char of text) {
      let code = this.codes.get(char);
      if (code === undefined) {
        code = this.font.encodeText(char).asString();
        this.codes.set(char, code);
      }
      out += code;
    }
    return out;
  }

  /** The advance width of `text` at `size` points. */
  width(text: string, size: number): number {
    if (!PER_CHARACTER.test(text)) return this.font.widthOfTextAtSize(text, size);
    let total = 0;
    for (const char of text) {
      let width = this.widths.get(char);
      if (width === undefined) {
        width = this.font.widthOfTextAtSize(char, 1000);
        this.widths.set(char, width);
      }
      total += width;
    }
    return (total * size) / 1000;
  }
}

/**
 * Breaks text into lines no wider than `width`; a word wider than a line is cut between characters.
 * Each word is measured once and widths are added up (pdf-lib places glyphs by their advance widths
 * alone), so a line costs time in proportion to its length.
 */
export function wrap(text: string, width: number, measure: (text: string) => number): string[] {
  const lines: string[] = [];
  const space = measure(' ');
  let current = '';
  let used = 0;
  for (const word of text.split(/\s+/)) {
    if (word === '') continue;
    const w = measure(word);
    if (current !== '' && used + space + w <= width) {
      current += ` ${word}`;
      used += space + w;
      continue;
    }
    if (current !== '') lines.push(current);
    if (w <= width) {
      current = word;
      used = w;
      continue;
    }
    current = '';
    used = 0;
    for (const char of word) {
      const c = measure(char);
      if (current !== '' && used + c > width) {
        lines.push(current);
        current = '';
        used = 0;
      }
      current += char;
      used += c;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}
