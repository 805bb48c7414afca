import { inflateSync } from 'node:zlib';
import { DEFAULT_LIMITS } from '../limits.js';
import { findHiddenObjectHeader } from './hidden.js';
import { FORBIDDEN_NAMES, STANDARD_14_FONTS } from './names.js';

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

class Name {
  /** A forbidden name (or `/Encrypt`): the reader gives up on meeting it. */
  readonly unsafe: boolean;
  /** The name's bytes, to compare with the next occurrence without building its text. */
  readonly bytes: Uint8Array;
  constructor(readonly value: string) {
    this.unsafe = FORBIDDEN_NAMES.has(value) || value === 'Encrypt';
    this.bytes = Buffer.from(value, 'latin1');
  }
}
class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
class Str {}
class Stream {
  constructor(readonly dict: Dict) {}
}
/**
 * A dictionary as its entries in file order. A repeated key reads as its last value, as in pdf-lib
 * (whose dictionaries are maps filled in file order); every value is still read and checked.
 */
class Dict {
  /** Keys and values, alternating: one array per dictionary. */
  readonly entries: (string | Value)[] = [];
  get(key: string): Value | undefined {
    const { entries } = this;
    for (let i = entries.length - 2; i >= 0; i -= 2) if (entries[i] === key) return entries[i + 1] as Value;
    return undefined;
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
}
type Value = Name | Ref | Str | Stream | Dict | Value[] | number | boolean | null;

/** Thrown inside the reader for anything outside the strict form; never escapes `quickInspect`. */
class Unsure extends Error {}
const unsure = (): never => {
  throw new Unsure();
};

/** Byte classes: 1 white space, 2 delimiter, 0 regular (PDF 1.7, 7.2.2). */
const CLASS = new Uint8Array(256);
for (const b of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) CLASS[b] = 1;
for (const b of '()<>[]{}/%') CLASS[b.charCodeAt(0)] = 2;
const isWhite = (b: number): boolean => CLASS[b] === 1;
const isRegular = (b: number): boolean => CLASS[b] === 0;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
/** Name characters accepted here: printable ASCII, no delimiter, no `#` (escaped names go the long way). */
const PLAIN_NAME = new Uint8Array(256);
for (let b = 0x21; b < 0x7f; b++) if (b !== 0x23 && CLASS[b] === 0) PLAIN_NAME[b] = 1;
const isPlainNameChar = (b: number): boolean => PLAIN_NAME[b] === 1;

/**
 * Names seen before, in a direct-mapped table by a hash of their bytes: a producer's files use a small
 * vocabulary (`Type`, `Font`, `FlateDecode`, resource names), so most names are found here without
 * building a string. A name whose slot holds another is built and takes the slot; a file full of new
 * names only makes the table useless, never larger.
 */
const NAME_SLOTS = 4096;
const interned: (Name | undefined)[] = new Array<Name | undefined>(NAME_SLOTS).fill(undefined);
/** Names longer than this are built each time (and never interned). */
const MAX_INTERNED_LENGTH = 64;

function sameText(name: Name, bytes: Uint8Array, start: number, end: number): boolean {
  const own = name.bytes;
  if (own.length !== end - start) return false;
  for (let i = 0; i < own.length; i++) if (own[i] !== bytes[start + i]) return false;
  return true;
}

class Reader {
  pos = 0;
  /**
   * @param dicts receives every dictionary the reader parses, nested ones and stream dictionaries
   *   included, in the order they open.
   */
  constructor(
    readonly bytes: Uint8Array,
    readonly dicts: Dict[],
  ) {}

  skipSpace(): void {
    const { bytes } = this;
    const n = bytes.length;
    let i = this.pos;
    while (i < n) {
      const b = bytes[i]!;
      if (isWhite(b)) i++;
      else if (b === 0x25) {
        while (i < n && bytes[i] !== 0x0a && bytes[i] !== 0x0d) i++;
      } else break;
    }
    this.pos = i;
  }

  /** A bare keyword or number token (regular characters up to the next white space or delimiter). */
  word(): string {
    const { bytes } = this;
    const start = this.pos;
    while (this.pos < bytes.length && isRegular(bytes[this.pos]!)) this.pos++;
    return latin1(bytes, start, this.pos);
  }

  /** Whether the next token is exactly `expected` (ASCII); consumed when it is. */
  atKeyword(expected: string): boolean {
    const { bytes } = this;
    const end = this.pos + expected.length;
    if (end > bytes.length || (end < bytes.length && isRegular(bytes[end]!))) return false;
    for (let k = 0; k < expected.length; k++) if (bytes[this.pos + k] !== expected.charCodeAt(k)) return false;
    this.pos = end;
    return true;
  }

  keyword(expected: string): void {
    if (!this.atKeyword(expected)) unsure();
  }

  /** An unsigned integer token of 1 to 10 digits, or -1 (position unchanged) for any other token. */
  digits(): number {
    const { bytes } = this;
    let i = this.pos;
    let n = 0;
    while (i < bytes.length && isDigit(bytes[i]!)) n = n * 10 + bytes[i++]! - 0x30;
    if (i === this.pos || i - this.pos > 10 || (i < bytes.length && isRegular(bytes[i]!))) return -1;
    this.pos = i;
    return n;
  }

  integer(): number {
    const n = this.digits();
    return n < 0 ? unsure() : n;
  }

  /** A name in plain form (no `#` escape), given up on when it is forbidden (or `/Encrypt`). */
  name(): Name {
    const { bytes } = this;
    const start = this.pos + 1; // after the slash
    const n = bytes.length;
    let end = start;
    let hash = 0x811c9dc5;
    for (; end < n; end++) {
      const b = bytes[end]!;
      if (!isPlainNameChar(b)) break;
      hash = Math.imul(hash ^ b, 0x01000193);
    }
    this.pos = end;
    if (end === start) unsure();
    if (end < n && isRegular(bytes[end]!)) unsure();
    const long = end - start > MAX_INTERNED_LENGTH;
    const slot = (hash ^ (hash >>> 16)) & (NAME_SLOTS - 1);
    let name = long ? undefined : interned[slot];
    if (name === undefined || !sameText(name, bytes, start, end)) {
      name = new Name(latin1(bytes, start, end));
      if (!long) interned[slot] = name;
    }
    if (name.unsafe) unsure();
    return name;
  }

  value(depth: number): Value {
    if (depth > 64) unsure();
    this.skipSpace();
    const { bytes } = this;
    const b = bytes[this.pos];
    if (b === undefined) return unsure();
    if (b === 0x2f) return this.name();
    if (b === 0x3c && bytes[this.pos + 1] === 0x3c) return this.dict(depth);
    if (b === 0x3c) return this.hexString();
    if (b === 0x28) return this.literalString();
    if (b === 0x5b) {
      this.pos++;
      const items: Value[] = [];
      for (;;) {
        this.skipSpace();
        if (bytes[this.pos] === 0x5d) break;
        items.push(this.value(depth + 1));
      }
      this.pos++;
      return items;
    }
    if (isDigit(b) || b === 0x2d || b === 0x2e) return this.numberOrRef();
    const word = this.word();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return unsure();
  }

  dict(depth: number): Dict {
    const { bytes } = this;
    this.pos += 2;
    const dict = new Dict();
    this.dicts.push(dict);
    for (;;) {
      this.skipSpace();
      if (bytes[this.pos] === 0x3e) {
        if (bytes[this.pos + 1] !== 0x3e) unsure();
        this.pos += 2;
        return dict;
      }
      if (bytes[this.pos] !== 0x2f) unsure();
      const key = this.name().value;
      dict.entries.push(key, this.value(depth + 1));
    }
  }

  numberOrRef(): number | Ref {
    const num = this.digits();
    if (num < 0) return this.real();
    // `n g R`, looked at without committing.
    const save = this.pos;
    this.skipSpace();
    const genStart = this.pos;
    const gen = this.digits();
    if (gen >= 0 && this.pos - genStart <= 5) {
      this.skipSpace();
      if (this.bytes[this.pos] === 0x52) {
        this.pos++;
        const next = this.bytes[this.pos];
        if (next === undefined || !isRegular(next)) return new Ref(num, gen);
        unsure();
      }
    }
    this.pos = save;
    return num;
  }

  /**
   * A number with a sign or a decimal point: `-?(d{1,15}(.d{0,15})?|.d{1,15})`, ending the token. Its
   * value is approximate beyond what a double holds; only integers are ever read for their value.
   */
  real(): number {
    const { bytes } = this;
    let i = this.pos;
    const negative = bytes[i] === 0x2d;
    if (negative) i++;
    const intStart = i;
    let value = 0;
    while (i < bytes.length && isDigit(bytes[i]!)) value = value * 10 + bytes[i++]! - 0x30;
    const intDigits = i - intStart;
    let fracDigits = 0;
    if (bytes[i] === 0x2e) {
      i++;
      let scale = 1;
      for (; i < bytes.length && isDigit(bytes[i]!); i++, fracDigits++) {
        scale /= 10;
        value += (bytes[i]! - 0x30) * scale;
      }
    }
    if (intDigits > 15 || fracDigits > 15 || (intDigits === 0 && fracDigits === 0)) unsure();
    if (i < bytes.length && isRegular(bytes[i]!)) unsure();
    this.pos = i;
    return negative ? -value : value;
  }

  hexString(): Str {
    const { bytes } = this;
    this.pos++;
    while (this.pos < bytes.length && bytes[this.pos] !== 0x3e) {
      const b = bytes[this.pos]!;
      if (!isWhite(b) && !isDigit(b) && !((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66)) unsure();
      this.pos++;
    }
    if (this.pos >= bytes.length) unsure();
    this.pos++;
    return new Str();
  }

  literalString(): Str {
    const { bytes } = this;
    let depth = 0;
    while (this.pos < bytes.length) {
      const b = bytes[this.pos]!;
      if (b === 0x5c) {
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) return new Str();
    }
    return unsure();
  }
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

const ENDSTREAM = Buffer.from('endstream', 'latin1');

interface Parsed {
  objects: Map<number, { gen: number; value: Value }>;
  /** Offsets of the `obj` keywords of the objects read. */
  objTokens: Set<number>;
  /** Every dictionary met, nested ones and stream dictionaries included, in file order. */
  dicts: Dict[];
  /** `/Root` of every trailer and cross-reference stream that names one. */
  roots: Value[];
}

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

/** FlateDecode or no filter, no parameters; bounded like an archive entry. */
function decode(stream: Dict, data: Uint8Array): Buffer {
  if (stream.has('DecodeParms')) unsure();
  const filter = stream.get('Filter');
  if (filter === undefined) return Buffer.from(data);
  if (!(filter instanceof Name) || filter.value !== 'FlateDecode') unsure();
  try {
    return inflateSync(data, { maxOutputLength: DEFAULT_LIMITS.maxEntryBytes });
  } catch {
    return unsure();
  }
}

function readObjectStream(parsed: Parsed, dict: Dict, data: Uint8Array): void {
  const n = directInt(dict, 'N');
  const first = directInt(dict, 'First');
  const body = decode(dict, data);
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

function checkXrefStream(dict: Dict, data: Uint8Array): void {
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
  if (decode(dict, data).length !== entries * (widths[0]! + widths[1]! + widths[2]!)) unsure();
}

function parseFile(pdf: Uint8Array): Parsed {
  const parsed: Parsed = { objects: new Map(), objTokens: new Set(), dicts: [], roots: [] };
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
        if (haystack.indexOf(ENDSTREAM, start) !== r.pos) unsure();
        r.pos += ENDSTREAM.length;
        if (dict.has('F') || dict.has('FFilter') || dict.has('FDecodeParms')) unsure();
        const type = dict.get('Type');
        if (type !== undefined && !(type instanceof Name)) unsure();
        const data = pdf.subarray(start, end);
        if (type instanceof Name && type.value === 'ObjStm') readObjectStream(parsed, dict, data);
        if (type instanceof Name && type.value === 'XRef') {
          checkXrefStream(dict, data);
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
        const trailer = r.dict(0);
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

/** Warnings for a certainly clean PDF in the plain form; `undefined` when the full inspection must decide. */
export function quickInspect(pdf: Uint8Array): string[] | undefined {
  try {
    const parsed = parseFile(pdf);
    if (findHiddenObjectHeader(pdf, parsed.objTokens) >= 0) unsure();
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
    return warnings.size > 1 ? undefined : [...warnings];
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
}
