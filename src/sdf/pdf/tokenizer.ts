import { byteSearch } from './byte-search.js';
import { decodePdfName } from './names.js';

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]);
const ENDSTREAM = Buffer.from('endstream', 'latin1');
const findEndstream = byteSearch(ENDSTREAM);

const isRegular = (byte: number): boolean => !WHITESPACE.has(byte) && !DELIMITERS.has(byte);

/**
 * F8, second pass: a lexical scan of the whole file that yields every name token outside strings,
 * comments and stream bodies, `#xx`-decoded. It sees objects the structural parser dropped
 * (earlier revisions, objects no cross-reference points at), so nothing hides behind a bad xref.
 * `objTokens`, when given, receives the offset of every `obj` keyword the scan reads.
 */
export function* scanNames(pdf: Uint8Array, objTokens?: Set<number>): Generator<string> {
  let i = 0;
  const n = pdf.length;
  while (i < n) {
    const byte = pdf[i]!;
    if (byte === 0x25) {
      // Comment: to end of line.
      while (i < n && pdf[i] !== 0x0a && pdf[i] !== 0x0d) i++;
    } else if (byte === 0x28) {
      i = skipLiteralString(pdf, i);
    } else if (byte === 0x3c && pdf[i + 1] === 0x3c) {
      i += 2; // dictionary opener, not a hex string
    } else if (byte === 0x3c) {
      while (i < n && pdf[i] !== 0x3e) i++;
      i++;
    } else if (byte === 0x2f) {
      const start = ++i;
      while (i < n && isRegular(pdf[i]!)) i++;
      yield decodePdfName(Buffer.from(pdf.buffer, pdf.byteOffset + start, i - start).toString('latin1'));
    } else if (isRegular(byte)) {
      const start = i;
      while (i < n && isRegular(pdf[i]!)) i++;
      if (i - start === 3 && pdf[start] === 0x6f && pdf[start + 1] === 0x62 && pdf[start + 2] === 0x6a) {
        objTokens?.add(start);
      } else if (
        i - start === 6 &&
        Buffer.from(pdf.buffer, pdf.byteOffset + start, 6).toString('latin1') === 'stream'
      ) {
        const end = findEndstream(Buffer.from(pdf.buffer, pdf.byteOffset, n), i);
        i = end < 0 ? n : end + ENDSTREAM.length;
      }
    } else {
      i++;
    }
  }
}

function skipLiteralString(pdf: Uint8Array, start: number): number {
  let depth = 0;
  let i = start;
  while (i < pdf.length) {
    const byte = pdf[i]!;
    if (byte === 0x5c) {
      i += 2;
      continue;
    }
    if (byte === 0x28) depth++;
    else if (byte === 0x29 && --depth === 0) return i + 1;
    i++;
  }
  return i;
}
