/**
 * What a layout says a document is made of, top to bottom. The flow (flow.ts) places these on pages;
 * the layouts (invoice.ts, ...) only decide which blocks a document has and what they hold.
 */

/** A line of a column: an optional label before the value, or a line of its own. */
export interface Row {
  label?: string;
  text: string;
  bold?: boolean;
  muted?: boolean;
  /** Nesting level of generic data (indented). */
  indent?: number;
}

export interface Column {
  heading?: string;
  rows: Row[];
}

export interface TableColumn {
  header: string;
  align: 'left' | 'right';
}

export interface TotalLine {
  label: string;
  value: string;
  strong?: boolean;
}

export interface Table {
  columns: TableColumn[];
  rows: string[][];
  /** Lines under the table, their values aligned on the last column's right edge. */
  totals?: TotalLine[];
  /** Only as wide as it needs (at least half the page), its columns even: a short table of numbers. */
  compact?: boolean;
}

export type Block =
  /** The issuer's name and its particulars, at the top of the first page. */
  | { kind: 'letterhead'; name: string; lines: string[] }
  | { kind: 'title'; text: string }
  /** Side by side (parties, facts); one column is a list of fields that may break across pages. */
  | { kind: 'columns'; columns: Column[] }
  | { kind: 'heading'; text: string }
  | { kind: 'table'; table: Table }
  /** Totals of a document without line items, right-aligned. */
  | { kind: 'totals'; lines: TotalLine[] }
  | { kind: 'paragraph'; text: string };

/** The document as the layouts describe it: its blocks and what each page's footer names. */
export interface DocumentLayout {
  /** The PDF's title (document information). */
  title: string;
  /** Left of every footer: the document and its number. */
  footer: string;
  blocks: Block[];
}
