import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A word as poppler places it: its box in points, y growing downwards from the top of the page. */
export interface PdfWord {
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

export interface PdfPageWords {
  width: number;
  height: number;
  words: PdfWord[];
}

const unescape = (text: string): string =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/g, '&');

function withFile<T>(pdf: Buffer, run: (file: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-pdf-text-'));
  try {
    const file = join(dir, 'visual.pdf');
    writeFileSync(file, pdf);
    return run(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The text a reader extracts (`pdftotext`): in poppler's reading order by default, `layout` as the page
 * shows it (each line left to right, columns kept apart by spaces), `raw` in the order it is stored.
 */
export function pdfText(pdf: Buffer, mode?: 'layout' | 'raw'): string {
  return withFile(pdf, (file) =>
    execFileSync('pdftotext', [...(mode ? [`-${mode}`] : []), file, '-'], { maxBuffer: 1 << 30 }).toString('utf8'),
  );
}

/** Every page's words with their boxes (`pdftotext -bbox`). */
export function pdfWords(pdf: Buffer): PdfPageWords[] {
  const html = withFile(pdf, (file) =>
    execFileSync('pdftotext', ['-bbox', file, '-'], { maxBuffer: 1 << 30 }).toString('utf8'),
  );
  const pages: PdfPageWords[] = [];
  const tag =
    /<page width="([\d.]+)" height="([\d.]+)">|<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)<\/word>/g;
  for (const match of html.matchAll(tag)) {
    if (match[1] !== undefined) {
      pages.push({ width: Number(match[1]), height: Number(match[2]), words: [] });
    } else {
      pages[pages.length - 1]!.words.push({
        text: unescape(match[7]!),
        xMin: Number(match[3]),
        yMin: Number(match[4]),
        xMax: Number(match[5]),
        yMax: Number(match[6]),
      });
    }
  }
  return pages;
}

/** The fonts poppler finds (`pdffonts`): name, type and whether each is embedded. */
export function pdfFonts(pdf: Buffer): { name: string; embedded: boolean }[] {
  const out = withFile(pdf, (file) => execFileSync('pdffonts', [file]).toString('utf8'));
  return out
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const cols = line.trim().split(/\s+/);
      // name type [type...] encoding emb sub uni object ID: emb is the fifth column from the end.
      return { name: cols[0]!, embedded: cols[cols.length - 5] === 'yes' };
    });
}
