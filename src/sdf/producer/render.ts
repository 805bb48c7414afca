import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, rgb, type PDFFont, type PDFPage } from 'pdf-lib';

const require = createRequire(import.meta.url);
const PAGE = { width: 595.28, height: 841.89, margin: 56 };
const SIZE = { title: 18, body: 10 };
const LEADING = 14;

let fontBytes: Promise<Buffer> | undefined;

/** Rule 2 / F8: the font is embedded, taken from the DejaVu npm package, so the PDF renders offline. */
function loadFont(): Promise<Buffer> {
  fontBytes ??= readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'));
  return fontBytes;
}

interface Line {
  text: string;
  indent: number;
}

const humanize = (key: string): string => key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

function isMoney(value: unknown): value is { amount: unknown; currency: unknown } {
  return typeof value === 'object' && value !== null && 'amount' in value && 'currency' in value;
}

/** Every field of data.json becomes a line (SDF_FORMAT 5, step 3: all fields visually represented). */
function toLines(value: unknown, label: string, indent: number, out: Line[]): void {
  if (isMoney(value)) {
    out.push({ text: `${label}: ${String(value.amount)} ${String(value.currency)}`, indent });
  } else if (Array.isArray(value)) {
    out.push({ text: `${label}:`, indent });
    value.forEach((item, i) => toLines(item, `${i + 1}.`, indent + 1, out));
  } else if (typeof value === 'object' && value !== null) {
    if (label !== '') out.push({ text: `${label}:`, indent });
    for (const [key, child] of Object.entries(value))
      toLines(child, humanize(key), label === '' ? indent : indent + 1, out);
  } else {
    out.push({ text: `${label}: ${value === null ? '' : String(value)}`, indent });
  }
}

function wrap(text: string, font: PDFFont, width: number): string[] {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let current = '';
  for (const word of words) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (font.widthOfTextAtSize(candidate, SIZE.body) <= width || current === '') current = candidate;
    else {
      lines.push(current);
      current = word;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}

function title(data: Record<string, unknown>): string {
  const type = typeof data.document_type === 'string' ? humanize(data.document_type) : 'Document';
  const numberKey = Object.keys(data).find((k) => /_(number|no|id)$/.test(k) && typeof data[k] === 'string');
  return numberKey ? `${type} ${String(data[numberKey])}` : type;
}

/** A plain, readable visual.pdf from data.json for producers without a PDF of their own. */
export async function render(data: Record<string, unknown>): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const font = await doc.embedFont(await loadFont(), { subset: true });
  const heading = title(data);
  doc.setTitle(heading);
  const lines: Line[] = [];
  toLines(data, '', 0, lines);

  // One font resource per page: pdf-lib gives a font passed to each drawText a new resource name.
  const newPage = (): PDFPage => {
    const added = doc.addPage([PAGE.width, PAGE.height]);
    added.setFont(font);
    return added;
  };
  let page = newPage();
  let y = PAGE.height - PAGE.margin;
  page.drawText(heading, { x: PAGE.margin, y, size: SIZE.title, color: rgb(0, 0, 0) });
  y -= LEADING * 2;
  for (const line of lines) {
    const x = PAGE.margin + line.indent * 14;
    for (const piece of wrap(line.text, font, PAGE.width - PAGE.margin - x)) {
      if (y < PAGE.margin) {
        page = newPage();
        y = PAGE.height - PAGE.margin;
      }
      page.drawText(piece, { x, y, size: SIZE.body, color: rgb(0.1, 0.1, 0.1) });
      y -= LEADING;
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}
