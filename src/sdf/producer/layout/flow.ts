import type { Column, DocumentLayout, Table, TotalLine } from './blocks.js';
import { PAGE, type Canvas, type PageCanvas, type TextStyle } from './canvas.js';
import { wrap } from './glyphs.js';

/** Margins, sizes and spacing of every layout, in points. */
export const GEOMETRY = {
  left: 50,
  right: PAGE.width - 50,
  top: PAGE.height - 50,
  /** No text below this line but the footer's. */
  bottom: 62,
  footerY: 34,
};
// Table headers in the body's size: a smaller header row makes poppler read a table column by column.
const SIZE = { body: 9, small: 7.5, header: 9, heading: 10.5, title: 20, letterhead: 15 };
const LEADING = 1.38;
const INDENT = 12;
const GUTTER = 24;
const CELL_PAD = 4;
/** Between a field's label and its value: more, and plain pdftotext reads labels and values apart. */
const LABEL_GAP = 5;

const lead = (size: number): number => size * LEADING;
const BODY: TextStyle = { size: SIZE.body };
const BOLD: TextStyle = { size: SIZE.body, bold: true };
const MUTED: TextStyle = { size: SIZE.body, tone: 'muted' };

/**
 * Places blocks top to bottom, page after page: a block that fits is never split, a list of fields or
 * a table breaks between lines and rows (a table's header row repeats on every page it continues on),
 * text wraps within its column and a word wider than its column is cut between characters, so no
 * text ever leaves the page. The footer ("Page N of M" and the document's number) is written last,
 * once the number of pages is known.
 */
export class Flow {
  private page!: PageCanvas;
  private y = 0;
  private readonly contentWidth = GEOMETRY.right - GEOMETRY.left;

  constructor(private readonly canvas: Canvas) {
    this.newPage();
  }

  private measure(size: number): (text: string) => number {
    return (text) => this.canvas.width(text, size);
  }

  private lines(text: string, width: number, size: number): string[] {
    const measure = this.measure(size);
    // Most values fit their column: measured once and written as they are.
    if (!text.includes('\n') && measure(text) <= width) return [text];
    const lines = wrap(text, width, measure);
    return lines.length > 0 ? lines : [''];
  }

  private newPage(): void {
    this.page = this.canvas.addPage();
    this.y = GEOMETRY.top;
  }

  /** Moves to a new page unless `height` fits below the current position. */
  private ensure(height: number): boolean {
    if (this.y - height >= GEOMETRY.bottom) return false;
    this.newPage();
    return true;
  }

  private gap(points: number): void {
    if (this.y !== GEOMETRY.top) this.y -= points;
  }

  render(layout: DocumentLayout): void {
    for (const block of layout.blocks) {
      switch (block.kind) {
        case 'letterhead':
          this.letterhead(block.name, block.lines);
          break;
        case 'title':
          this.title(block.text);
          break;
        case 'columns':
          this.columns(block.columns);
          break;
        case 'heading':
          this.heading(block.text);
          break;
        case 'table':
          this.table(block.table);
          break;
        case 'totals':
          this.gap(6);
          this.totals(block.lines, GEOMETRY.right - CELL_PAD);
          break;
        case 'paragraph':
          this.paragraph(block.text);
          break;
      }
    }
    this.footers(layout.footer);
  }

  private letterhead(name: string, lines: string[]): void {
    const nameLines = this.lines(name, this.contentWidth, SIZE.letterhead);
    const small = lines.flatMap((l) => this.lines(l, this.contentWidth, SIZE.small));
    this.ensure(nameLines.length * lead(SIZE.letterhead) + small.length * lead(SIZE.small) + 8);
    for (const line of nameLines) {
      this.y -= SIZE.letterhead;
      this.page.write(line, GEOMETRY.left, this.y, { size: SIZE.letterhead, bold: true, tone: 'accent' });
      this.y -= lead(SIZE.letterhead) - SIZE.letterhead;
    }
    for (const line of small) {
      this.y -= lead(SIZE.small);
      this.page.write(line, GEOMETRY.left, this.y, { size: SIZE.small, tone: 'muted' });
    }
    this.y -= 6;
    this.page.rule(GEOMETRY.left, GEOMETRY.right, this.y, 0.8, 0.55);
    this.y -= 4;
  }

  private title(text: string): void {
    const lines = this.lines(text, this.contentWidth, SIZE.title);
    this.gap(14);
    this.ensure(lines.length * lead(SIZE.title));
    for (const line of lines) {
      this.y -= SIZE.title;
      this.page.write(line, GEOMETRY.left, this.y, { size: SIZE.title, bold: true, tone: 'accent' });
      this.y -= lead(SIZE.title) - SIZE.title;
    }
  }

  private heading(text: string): void {
    const lines = this.lines(text, this.contentWidth, SIZE.heading);
    this.gap(12);
    // A heading never ends a page: it keeps the first line of what it heads.
    this.ensure(lines.length * lead(SIZE.heading) + 4 + lead(SIZE.body));
    for (const line of lines) {
      this.y -= lead(SIZE.heading);
      this.page.write(line, GEOMETRY.left, this.y, { size: SIZE.heading, bold: true, tone: 'accent' });
    }
    this.y -= 3;
    this.page.rule(GEOMETRY.left, GEOMETRY.right, this.y);
    this.y -= 1;
  }

  private paragraph(text: string): void {
    this.gap(4);
    for (const line of this.lines(text, this.contentWidth, SIZE.body)) {
      this.ensure(lead(SIZE.body));
      this.y -= lead(SIZE.body);
      this.page.write(line, GEOMETRY.left, this.y, BODY);
    }
  }

  /** A column's rows laid out at `width`: each a list of (x offset, text, style) lines. */
  private columnLines(column: Column, width: number): { dx: number; text: string; style: TextStyle }[][] {
    const labelled = column.rows.filter((r) => r.label !== undefined);
    const widest = Math.max(0, ...labelled.slice(0, 200).map((r) => this.canvas.width(r.label!, SIZE.body)));
    const labelWidth = labelled.length > 0 ? Math.min(widest + 10, width * 0.5) : 0;
    const out: { dx: number; text: string; style: TextStyle }[][] = [];
    if (column.heading !== undefined) {
      out.push([{ dx: 0, text: column.heading, style: { size: SIZE.small, bold: true, tone: 'muted' } }]);
    }
    for (const row of column.rows) {
      // Deep nesting still leaves a third of the column for the text.
      const indent = Math.min((row.indent ?? 0) * INDENT, width * 0.66);
      const style = row.bold ? BOLD : row.muted ? MUTED : BODY;
      if (row.label === undefined) {
        for (const text of this.lines(row.text, width - indent, SIZE.body)) out.push([{ dx: indent, text, style }]);
        continue;
      }
      const labelSpace = Math.min(labelWidth, (width - indent) / 2);
      // Labels end a gap before their values, right-aligned: a reader (and text extraction) takes each
      // label and its value as one line.
      const labels = this.lines(row.label, labelSpace - LABEL_GAP, SIZE.body);
      const values = row.text === '' ? [] : this.lines(row.text, width - indent - labelSpace, SIZE.body);
      const lines = [];
      for (let i = 0; i < Math.max(labels.length, values.length); i++) {
        const line = [];
        if (i < labels.length) {
          const dx = indent + labelSpace - LABEL_GAP - this.canvas.width(labels[i]!, SIZE.body);
          line.push({ dx, text: labels[i]!, style: MUTED });
        }
        if (i < values.length) line.push({ dx: indent + labelSpace, text: values[i]!, style });
        lines.push(line);
      }
      out.push(...lines);
    }
    return out;
  }

  /**
   * Side-by-side columns stay together on one page when they fit there; a single column (a list of
   * fields) breaks between its lines, and columns too long for a page are stacked instead.
   */
  private columns(columns: Column[]): void {
    this.gap(10);
    const leading = lead(SIZE.body);
    if (columns.length > 1) {
      const width = (this.contentWidth - GUTTER * (columns.length - 1)) / columns.length;
      const laid = columns.map((c) => this.columnLines(c, width));
      const height = Math.max(...laid.map((l) => l.length)) * leading;
      if (height <= GEOMETRY.top - GEOMETRY.bottom) {
        this.ensure(height);
        const top = this.y;
        laid.forEach((lines, i) => {
          const x = GEOMETRY.left + i * (width + GUTTER);
          lines.forEach((line, n) => {
            for (const piece of line) this.page.write(piece.text, x + piece.dx, top - (n + 1) * leading, piece.style);
          });
        });
        this.y = top - height;
        return;
      }
    }
    for (const column of columns) {
      for (const line of this.columnLines(column, this.contentWidth)) {
        this.ensure(leading);
        this.y -= leading;
        for (const piece of line) this.page.write(piece.text, GEOMETRY.left + piece.dx, this.y, piece.style);
      }
    }
  }

  /**
   * Column widths: right-aligned (number) columns as wide as their widest cell; left-aligned columns
   * share the rest in proportion to their widest cells, each at least a fifth of its natural width.
   */
  private columnWidths(table: Table): number[] {
    const measure = this.measure(SIZE.body);
    const natural = table.columns.map((c) => measure(c.header) + 2 * CELL_PAD);
    for (const row of table.rows) {
      for (let i = 0; i < natural.length; i++) {
        const cell = row[i];
        if (cell) natural[i] = Math.max(natural[i]!, measure(cell) + 2 * CELL_PAD);
      }
    }
    const widths = natural.map((w) => Math.min(w, this.contentWidth));
    const total = widths.reduce((a, b) => a + b, 0);
    // A narrow table of numbers (hourly quantities) reads better narrow: half the page, its columns even.
    const available = table.compact
      ? Math.min(this.contentWidth, Math.max(total, this.contentWidth / 2))
      : this.contentWidth;
    const left = table.compact ? [] : table.columns.map((c, i) => (c.align === 'left' ? i : -1)).filter((i) => i >= 0);
    if (table.compact && total <= available) return widths.map((w) => w + (available - total) / widths.length);
    if (total <= available) {
      // The room left over goes to the text columns (the description), else to the first column.
      const growing = left.length > 0 ? left : [0];
      const share = (available - total) / growing.length;
      for (const i of growing) widths[i]! += share;
      return widths;
    }
    const fixed = widths.reduce((sum, w, i) => (left.includes(i) ? sum : sum + w), 0);
    const flexible = total - fixed;
    if (left.length > 0 && available - fixed >= 40 * left.length) {
      const scale = (available - fixed) / flexible;
      for (const i of left) widths[i] = widths[i]! * scale;
      return widths;
    }
    return widths.map((w) => (w * available) / total);
  }

  private headerRow(table: Table, xs: number[], widths: number[]): void {
    const right = xs.at(-1)! + widths.at(-1)!;
    const style: TextStyle = { size: SIZE.header, bold: true, tone: 'muted' };
    const cells = table.columns.map((c, i) => this.lines(c.header, widths[i]! - 2 * CELL_PAD, SIZE.header));
    const height = Math.max(...cells.map((c) => c.length)) * lead(SIZE.header) + 5;
    this.page.shade(GEOMETRY.left, this.y - height, right - GEOMETRY.left, height);
    cells.forEach((lines, i) => {
      lines.forEach((line, n) => {
        const x = this.cellX(table.columns[i]!.align, xs[i]!, widths[i]!, line, SIZE.header);
        this.page.write(line, x, this.y - 2 - (n + 1) * lead(SIZE.header) + 1.5, style);
      });
    });
    this.y -= height;
    this.page.rule(GEOMETRY.left, right, this.y, 0.6, 0.6);
  }

  private cellX(align: 'left' | 'right', x: number, width: number, text: string, size: number): number {
    return align === 'right' ? x + width - CELL_PAD - this.canvas.width(text, size) : x + CELL_PAD;
  }

  /**
   * A table, its header row repeated at the top of every page it continues on, then its totals with
   * their values on the last column's right edge. A row taller than a page breaks between its lines.
   */
  private table(table: Table): void {
    this.gap(10);
    const widths = this.columnWidths(table);
    const xs: number[] = [];
    widths.reduce((x, w) => (xs.push(x), x + w), GEOMETRY.left);
    const leading = lead(SIZE.body);
    const headerHeight = lead(SIZE.header) * 2 + 5;
    this.ensure(headerHeight + leading + 4);
    this.headerRow(table, xs, widths);
    for (const row of table.rows) {
      const cells = table.columns.map((_, i) => this.lines(row[i] ?? '', widths[i]! - 2 * CELL_PAD, SIZE.body));
      const count = Math.max(...cells.map((c) => c.length));
      if (this.y - count * leading - 4 < GEOMETRY.bottom && count * leading + 4 <= GEOMETRY.top - GEOMETRY.bottom) {
        this.newPage();
        this.headerRow(table, xs, widths);
      }
      this.y -= 2;
      for (let n = 0; n < count; n++) {
        if (this.y - leading < GEOMETRY.bottom) {
          this.newPage();
          this.headerRow(table, xs, widths);
        }
        this.y -= leading;
        cells.forEach((lines, i) => {
          const line = lines[n];
          if (line === undefined) return;
          this.page.write(line, this.cellX(table.columns[i]!.align, xs[i]!, widths[i]!, line, SIZE.body), this.y, BODY);
        });
      }
      this.y -= 2;
    }
    const right = xs.at(-1)! + widths.at(-1)!;
    this.page.rule(GEOMETRY.left, right, this.y, 0.6, 0.6);
    if (table.totals && table.totals.length > 0) this.totals(table.totals, right - CELL_PAD);
  }

  /** Label and value lines kept together, values right-aligned on `right`. */
  private totals(lines: TotalLine[], right: number): void {
    const leading = lead(SIZE.body) + 2;
    const valueWidth = Math.max(...lines.map((l) => this.canvas.width(l.value, SIZE.body)));
    const labelRight = right - valueWidth - LABEL_GAP - 1;
    const labelWidth = Math.max(labelRight - GEOMETRY.left, 60);
    const rows = lines.map((l) => ({ ...l, labels: this.lines(l.label, labelWidth, SIZE.body) }));
    const height = rows.reduce((h, r) => h + r.labels.length * leading, 6);
    this.ensure(height);
    this.y -= 4;
    for (const row of rows) {
      const style = row.strong ? BOLD : BODY;
      if (row.strong) this.page.rule(labelRight - 90, right + CELL_PAD, this.y - 2, 0.6, 0.6);
      row.labels.forEach((label, n) => {
        this.y -= leading;
        this.page.write(label, labelRight - this.canvas.width(label, SIZE.body), this.y, row.strong ? BOLD : MUTED);
        if (n === 0) this.page.write(row.value, right - this.canvas.width(row.value, SIZE.body), this.y, style);
      });
    }
  }

  private footers(label: string): void {
    const pages = this.canvas.pages;
    const style: TextStyle = { size: SIZE.small, tone: 'muted' };
    const labelLine = this.lines(label, this.contentWidth * 0.6, SIZE.small)[0] ?? '';
    pages.forEach((page, i) => {
      page.rule(GEOMETRY.left, GEOMETRY.right, GEOMETRY.footerY + 12);
      page.write(labelLine, GEOMETRY.left, GEOMETRY.footerY, style);
      const number = `Page ${i + 1} of ${pages.length}`;
      page.write(number, GEOMETRY.right - this.canvas.width(number, SIZE.small), GEOMETRY.footerY, style);
    });
  }
}
