import { FORBIDDEN_NAMES } from './names.js';

/**
 * The lexer and object parser of the F8 fast path (quick.ts): PDF objects in the strict form only.
 * Anything outside it throws `Unsure`, which the fast path turns into "let the full inspection decide".
 */

export class Name {
  /** A forbidden name (or `/Encrypt`): the reader gives up on meeting it. */
  readonly unsafe: boolean;
  /** The name's bytes, to compare with the next occurrence without building its text. */
  readonly bytes: Uint8Array;
  constructor(readonly value: string) {
    this.unsafe = FORBIDDEN_NAMES.has(value) || value === 'Encrypt';
    this.bytes = Buffer.from(value, 'latin1');
  }
}
export class Ref {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}
/** A string, as the offsets of its raw bytes between the delimiters: decoded only when read (findings.ts). */
export class Str {
  constructor(
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly end: number,
    readonly hex: boolean,
  ) {}
}
export class Stream {
  constructor(readonly dict: Dict) {}
}
/**
 * A dictionary as its entries in file order. A repeated key reads as its last value, as in pdf-lib
 * (whose dictionaries are maps filled in file order); every value is still read and checked.
 */
export class Dict {
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
export type Value = Name | Ref | Str | Stream | Dict | Value[] | number | boolean | null;

/** Thrown inside the reader for anything outside the strict form; never escapes `quickInspect`. */
export class Unsure extends Error {}
export const unsure = (): never => {
  throw new Unsure();
};

/** Byte classes: 1 white space, 2 delimiter, 0 regular (PDF 1.7, 7.2.2). */
const CLASS = new Uint8Array(256);
for (const b of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) CLASS[b] = 1;
for (const b of '()<>[]{}/%') CLASS[b.charCodeAt(0)] = 2;
const isWhite = (b: number): boolean => CLASS[b] === 1;
const isRegular = (b: number): boolean => CLASS[b] === 0;
export const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
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

export class Reader {
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
    const start = ++this.pos;
    while (this.pos < bytes.length && bytes[this.pos] !== 0x3e) {
      const b = bytes[this.pos]!;
      if (!isWhite(b) && !isDigit(b) && !((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66)) unsure();
      this.pos++;
    }
    if (this.pos >= bytes.length) unsure();
    this.pos++;
    return new Str(bytes, start, this.pos - 1, true);
  }

  literalString(): Str {
    const { bytes } = this;
    const start = this.pos + 1;
    let depth = 0;
    while (this.pos < bytes.length) {
      const b = bytes[this.pos]!;
      if (b === 0x5c) {
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (b === 0x28) depth++;
      else if (b === 0x29 && --depth === 0) return new Str(bytes, start, this.pos - 1, false);
    }
    return unsure();
  }
}

export function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}
