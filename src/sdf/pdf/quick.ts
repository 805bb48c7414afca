import { inflateSync } from 'node:zlib';
import { DEFAULT_LIMITS } from '../limits.js';
import { byteSearch } from './byte-search.js';
import { findHiddenObjectHeader } from './hidden.js';
import { PdfFindings, type PdfObjectView } from './findings.js';
import { STANDARD_14_FONTS } from './names.js';
import { Dict, Name, Reader, Ref, Str, Stream, Unsure, isDigit, latin1, unsure, type Value } from './strict-reader.js';

/**
 * F8 fast path. A strict reader for PDFs written in the plain form producers emit (pdf-lib's
 * included): the whole file is a header, `n g obj ... endobj` objects, cross-reference tables or
 * streams, trailers and comments, nothing else. It parses every object (and every object inside a
 * FlateDecode object stream) and returns the warnings only when the file is certainly clean under the
 * same rules as the full inspection. Anything it does not fully understand, and anything that might be
 * unsafe, returns `undefined`: the caller then runs the full inspection, which gives the verdict. So
 * this path can only ever accept, and only files the full inspection accepts with the same warnings.
 *
 * It also stands in for the full inspection's lexical scan (`scanNames`). On a file in the strict form
 * the two read the same tokens: comments, literal and hex strings end where the scan ends them, every
 * name is checked here (unescaped, since any `#` is left to the full inspection), and a stream's data
 * is skipped by its `/Length` only when no `endstream` occurs inside it, which is where the scan stops
 * skipping. A name the scan would find is therefore a name this reader met and checked.
 */

const ENDSTREAM = Buffer.from('endstream', 'latin1');
const findEndstream = byteSearch(ENDSTREAM);

interface Parsed {
  pdf: Uint8Array;
  objects: Map<number, { gen: number; value: Value }>;
  /** Offsets of the `obj` keywords of the objects read. */
  objTokens: Set<number>;
  /** Every dictionary met, nested ones and stream dictionaries included, in file order. */
  dicts: Dict[];
  /**
   * The dictionaries of trailers, object streams and cross-reference streams, and those nested in them:
   * not objects of the document (pdf-lib keeps none of them as one), so not read for findings.
   */
  notObjects: Set<Dict>;
  /** `/Root` of every trailer and cross-reference stream that names one. */
  roots: Value[];
  /** Object streams and cross-reference streams, read once their data is decoded (see settle). */
  streams: { dict: Dict; data: Uint8Array; objects: boolean }[];
}

/**
 * Inflates the zlib-wrapped data of a FlateDecode stream, failing past `maxOutputLength`; the browser
 * reader passes its native inflate. Whatever it returns is read as zlib's output would be.
 */
export type StreamInflater = (data: Uint8Array, maxOutputLength: number) => Promise<Uint8Array>;

function define(parsed: Parsed, num: number, gen: number, value: Value): void {
  // One object per number: which of two versions counts is a choice the full inspection makes.
  if (parsed.objects.has(num)) unsure();
  parsed.objects.set(num, { gen, value });
}

function directInt(dict: Dict, key: string): number {
  const v = dict.get(key);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return unsure();
  return v;
}

/** FlateDecode (true) or no filter (false), no parameters; anything else is left to the full inspection. */
function isFlate(stream: Dict): boolean {
  if (stream.has('DecodeParms')) unsure();
  const filter = stream.get('Filter');
  if (filter === undefined) return false;
  if (!(filter instanceof Name) || filter.value !== 'FlateDecode') unsure();
  return true;
}

/** A stream's data decoded, bounded like an archive entry. */
function decode(stream: Dict, data: Uint8Array): Uint8Array {
  if (!isFlate(stream)) return data;
  try {
    return inflateSync(data, { maxOutputLength: DEFAULT_LIMITS.maxEntryBytes });
  } catch {
    return unsure();
  }
}

async function decodeWith(inflate: StreamInflater, stream: Dict, data: Uint8Array): Promise<Uint8Array> {
  if (!isFlate(stream)) return data;
  try {
    return await inflate(data, DEFAULT_LIMITS.maxEntryBytes);
  } catch {
    return unsure();
  }
}

function readObjectStream(parsed: Parsed, dict: Dict, body: Uint8Array): void {
  const n = directInt(dict, 'N');
  const first = directInt(dict, 'First');
  const r = new Reader(body, parsed.dicts);
  const entries: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    r.skipSpace();
    const num = r.integer();
    r.skipSpace();
    const offset = r.integer();
    entries.push([num, offset]);
  }
  r.skipSpace();
  if (r.pos > first) unsure();
  for (let i = 0; i < n; i++) {
    const [num, offset] = entries[i]!;
    const end = i + 1 < n ? first + entries[i + 1]![1] : body.length;
    r.pos = first + offset;
    if (r.pos > end || end > body.length) unsure();
    const value = r.value(0);
    r.skipSpace();
    if (r.pos !== end) unsure();
    define(parsed, num, 0, value);
  }
}

function checkXrefStream(dict: Dict, body: Uint8Array): void {
  const w = dict.get('W');
  if (!Array.isArray(w) || w.length !== 3) unsure();
  const widths = (w as Value[]).map((x) => (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? x : unsure()));
  const index = dict.get('Index') ?? [0, directInt(dict, 'Size')];
  if (!Array.isArray(index) || index.length % 2 !== 0) unsure();
  let entries = 0;
  (index as Value[]).forEach((x, i) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) unsure();
    if (i % 2 === 1) entries += x as number;
  });
  if (body.length !== entries * (widths[0]! + widths[1]! + widths[2]!)) unsure();
}

function parseFile(pdf: Uint8Array): Parsed {
  const parsed: Parsed = {
    pdf,
    objects: new Map(),
    objTokens: new Set(),
    dicts: [],
    notObjects: new Set(),
    roots: [],
    streams: [],
  };
  const notObjects = (from: number): void => {
    for (let i = from; i < parsed.dicts.length; i++) parsed.notObjects.add(parsed.dicts[i]!);
  };
  const r = new Reader(pdf, parsed.dicts);
  if (!/^%PDF-\d\.\d[\r\n]/.test(latin1(pdf, 0, Math.min(pdf.length, 9)))) unsure();
  const haystack = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.length);
  for (;;) {
    r.skipSpace();
    if (r.pos >= pdf.length) break;
    const b = pdf[r.pos]!;
    if (isDigit(b)) {
      const num = r.integer();
      r.skipSpace();
      const gen = r.integer();
      r.skipSpace();
      parsed.objTokens.add(r.pos);
      r.keyword('obj');
      const firstDict = parsed.dicts.length;
      let value = r.value(0);
      r.skipSpace();
      if (value instanceof Dict && r.atKeyword('stream')) {
        const dict = value;
        if (pdf[r.pos] === 0x0d) r.pos++;
        if (pdf[r.pos] !== 0x0a) unsure();
        r.pos++;
        const start = r.pos;
        const end = start + directInt(dict, 'Length');
        if (end > pdf.length) unsure();
        r.pos = end;
        r.skipSpace();
        // The first `endstream` after the data must be this one: the lexical scan of the full inspection
        // ends a stream at the first `endstream`, so data holding the word is left to it (see quickInspect).
        if (findEndstream(haystack, start) !== r.pos) unsure();
        r.pos += ENDSTREAM.length;
        if (dict.has('F') || dict.has('FFilter') || dict.has('FDecodeParms')) unsure();
        const type = dict.get('Type');
        if (type !== undefined && !(type instanceof Name)) unsure();
        const data = pdf.subarray(start, end);
        if (type instanceof Name && (type.value === 'ObjStm' || type.value === 'XRef')) notObjects(firstDict);
        if (type instanceof Name && type.value === 'ObjStm') parsed.streams.push({ dict, data, objects: true });
        if (type instanceof Name && type.value === 'XRef') {
          parsed.streams.push({ dict, data, objects: false });
          if (dict.has('Root')) parsed.roots.push(dict.get('Root')!);
        }
        value = new Stream(dict);
      }
      r.skipSpace();
      r.keyword('endobj');
      define(parsed, num, gen, value);
    } else {
      const word = r.word();
      if (word === 'xref') {
        // Subsections: `first count`, then `count` entries of `offset generation n|f`.
        for (;;) {
          r.skipSpace();
          if (!isDigit(pdf[r.pos] ?? 0)) break;
          r.integer();
          r.skipSpace();
          const count = r.integer();
          for (let i = 0; i < count; i++) {
            r.skipSpace();
            r.integer();
            r.skipSpace();
            r.integer();
            r.skipSpace();
            if (!r.atKeyword('n') && !r.atKeyword('f')) unsure();
          }
        }
      } else if (word === 'trailer') {
        r.skipSpace();
        if (pdf[r.pos] !== 0x3c || pdf[r.pos + 1] !== 0x3c) unsure();
        const firstDict = parsed.dicts.length;
        const trailer = r.dict(0);
        notObjects(firstDict);
        if (trailer.has('Root')) parsed.roots.push(trailer.get('Root')!);
      } else if (word === 'startxref') {
        r.skipSpace();
        r.integer();
      } else {
        unsure();
      }
    }
  }
  return parsed;
}

/** The same font rule as the full inspection (F8), on the reader's objects. */
function fontWarning(dict: Dict, lookup: (v: Value | undefined) => Value | undefined): string | undefined {
  if (dict.has('FS')) unsure();
  const type = lookup(dict.get('Type'));
  const typed = type instanceof Name && type.value === 'Font';
  if (!typed && !dict.has('BaseFont') && !dict.has('FontDescriptor')) return undefined;
  const subtype = lookup(dict.get('Subtype'));
  const subtypeName = subtype instanceof Name ? subtype.value : '';
  if (subtypeName === 'Type0' || subtypeName === 'Type3') return undefined;
  const baseFont = lookup(dict.get('BaseFont'));
  const fullName = baseFont instanceof Name ? baseFont.value : '(unnamed)';
  const descriptor = lookup(dict.get('FontDescriptor'));
  if (descriptor instanceof Dict && ['FontFile', 'FontFile2', 'FontFile3'].some((key) => descriptor.has(key))) {
    return undefined;
  }
  const name = fullName.replace(/^[A-Z]{6}\+/, '');
  if (STANDARD_14_FONTS.has(name)) return `visual.pdf: standard font ${name} is not embedded`;
  return unsure();
}

const isNamed = (value: Value | undefined, name: string): boolean => value instanceof Name && value.value === name;

/**
 * Rule 11: the file has pages to show. One catalog, named by every trailer, whose page tree (reached
 * through references only, without a cycle) ends in at least one page; anything else is left to the
 * full inspection, which counts the pages as pdf-lib finds them.
 */
function checkPages(parsed: Parsed, lookup: (v: Value | undefined) => Value | undefined): void {
  const root = parsed.roots[0];
  if (
    !(root instanceof Ref) ||
    parsed.roots.some((r) => !(r instanceof Ref) || r.num !== root.num || r.gen !== root.gen)
  ) {
    unsure();
  }
  const catalog = lookup(root);
  if (!(catalog instanceof Dict) || !isNamed(lookup(catalog.get('Type')), 'Catalog')) unsure();
  const top = (catalog as Dict).get('Pages');
  const visited = new Set<number>();
  const nodes: Value[] = [top!];
  let pages = 0;
  while (nodes.length > 0) {
    const ref = nodes.pop();
    if (!(ref instanceof Ref) || visited.has(ref.num)) unsure();
    visited.add((ref as Ref).num);
    const node = lookup(ref);
    if (!(node instanceof Dict)) return unsure();
    const type = lookup(node.get('Type'));
    if (isNamed(type, 'Page')) {
      pages++;
      continue;
    }
    if (!isNamed(type, 'Pages')) unsure();
    const kids = lookup(node.get('Kids'));
    if (!Array.isArray(kids)) unsure();
    for (let i = (kids as Value[]).length - 1; i >= 0; i--) nodes.push((kids as Value[])[i]!);
  }
  if (pages === 0) unsure();
}

/**
 * Warnings for a certainly clean PDF in the plain form; `undefined` when the full inspection must decide.
 * The object and cross-reference streams are read after the rest of the file: any of the reads being
 * unsure makes the whole answer `undefined`, so the order in which they happen cannot change it.
 */
export function quickInspect(pdf: Uint8Array): string[] | undefined {
  try {
    const parsed = parseFile(pdf);
    return settle(
      parsed,
      parsed.streams.map(({ dict, data }) => decode(dict, data)),
    );
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
}

/** quickInspect with the host's inflate for the streams' data (the browser reader's native one). */
export async function quickInspectWith(pdf: Uint8Array, inflate: StreamInflater): Promise<string[] | undefined> {
  try {
    const parsed = parseFile(pdf);
    const bodies: Uint8Array[] = [];
    for (const { dict, data } of parsed.streams) bodies.push(await decodeWith(inflate, dict, data));
    return settle(parsed, bodies);
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
}

function settle(parsed: Parsed, bodies: Uint8Array[]): string[] | undefined {
  parsed.streams.forEach(({ dict, objects }, i) => {
    if (objects) readObjectStream(parsed, dict, bodies[i]!);
    else checkXrefStream(dict, bodies[i]!);
  });
  if (findHiddenObjectHeader(parsed.pdf, parsed.objTokens) >= 0) unsure();
  const lookup = (v: Value | undefined): Value | undefined => {
    if (!(v instanceof Ref)) return v;
    const target = parsed.objects.get(v.num);
    return target === undefined || target.gen !== v.gen ? unsure() : target.value;
  };
  checkPages(parsed, lookup);
  const warnings = new Set<string>();
  for (const dict of parsed.dicts) {
    const warning = fontWarning(dict, lookup);
    if (warning !== undefined) warnings.add(warning);
  }
  // Several warnings: their order follows the full inspection's traversal; let it produce them.
  if (warnings.size > 1) unsure();
  const findings = new PdfFindings(objectView(lookup));
  for (const dict of parsed.dicts) if (!parsed.notObjects.has(dict)) findings.visit(dict);
  // Past the cap, which findings were kept depends on the order they came in: the full inspection decides.
  if (findings.overflowed.size > 0) unsure();
  return [...warnings, ...findings.warnings()];
}

/** The reader's objects as findings.ts reads them. */
function objectView(lookup: (v: Value | undefined) => Value | undefined): PdfObjectView<Value> {
  const dictOf = (v: Value | undefined): Dict | undefined =>
    v instanceof Dict ? v : v instanceof Stream ? v.dict : undefined;
  return {
    resolve: lookup,
    refKey: (v) => (v instanceof Ref ? v.num * 100_000 + v.gen : undefined),
    get: (v, key) => dictOf(v)?.get(key),
    isDict: (v) => v instanceof Dict,
    keys: (v) => {
      if (!(v instanceof Dict)) return undefined;
      const keys = new Set<string>();
      for (let i = 0; i < v.entries.length; i += 2) keys.add(v.entries[i] as string);
      return [...keys];
    },
    name: (v) => (v instanceof Name ? v.value : undefined),
    rawString: (v, max) =>
      v instanceof Str ? { raw: latin1(v.bytes, v.start, Math.min(v.end, v.start + max)), hex: v.hex } : undefined,
    number: (v) => (typeof v === 'number' ? v : undefined),
    items: (v) => (Array.isArray(v) ? v : undefined),
  };
}
