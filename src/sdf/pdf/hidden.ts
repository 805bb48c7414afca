/**
 * F8, "anywhere": an object a viewer can reach must be an object the inspection read. Viewers find
 * objects through the cross-reference offsets, or, when those are broken, by searching the raw bytes
 * for object headers; either way an `n g obj` written inside a stream's data, a string or a comment
 * becomes a real object to them, while a parser that reads the file in order (ours, pdf-lib's) skips
 * it. A catalog's `/OpenAction 5 0 R` can then run JavaScript that no name scan ever saw.
 *
 * So every object header in the raw bytes (two integers and `obj`, separated by white space or
 * comments) must be one the inspection read as tokens. Anything else is refused; in a clean file the
 * only other occurrences of `obj` are the ends of `endobj` and chance bytes of compressed data, which
 * are not preceded by two integers.
 */

const OBJ = Buffer.from('obj', 'latin1');

/** White space and delimiters (PDF 1.7, 7.2.2): anything else is a regular character. */
const CLASS = new Uint8Array(256);
for (const b of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) CLASS[b] = 1;
for (const b of '()<>[]{}/%') CLASS[b.charCodeAt(0)] = 2;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;

/**
 * How far back from an `obj` the search for its integers goes. A header padded by more white space
 * and comments than this is counted as a header: no clean file has one.
 */
const MAX_LOOKBACK = 1024;

/**
 * The offset of the first `obj` keyword in `pdf` that ends an object header and is not in `read`
 * (the offsets of the `obj` tokens the inspection read), or -1 when there is none.
 */
export function findHiddenObjectHeader(pdf: Uint8Array, read: ReadonlySet<number>): number {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.length);
  for (let p = bytes.indexOf(OBJ); p >= 0; p = bytes.indexOf(OBJ, p + 1)) {
    if (read.has(p)) continue;
    const after = bytes[p + 3];
    if (after !== undefined && CLASS[after] === 0) continue; // `objx`: another word
    if (p > 0 && CLASS[bytes[p - 1]!] === 0) continue; // `endobj`, `0obj`: part of another word
    if (endsHeader(bytes, p)) return p;
  }
  return -1;
}

/** Whether the bytes before `p` end with `integer separator integer separator`. */
function endsHeader(bytes: Buffer, p: number): boolean {
  const floor = Math.max(0, p - MAX_LOOKBACK);
  const exhausted = floor > 0; // running out of budget counts as a header; reaching the file start does not
  let i = skipBack(bytes, p - 1, floor);
  if (i === p - 1) return false; // `0obj` is one word
  if (i < floor) return exhausted;
  const generationEnd = i;
  while (i >= floor && isDigit(bytes[i]!)) i--;
  if (i === generationEnd) return false;
  const afterGeneration = i;
  i = skipBack(bytes, i, floor);
  if (i === afterGeneration) return false;
  if (i < floor) return exhausted;
  const numberEnd = i;
  while (i >= floor && isDigit(bytes[i]!)) i--;
  if (i === numberEnd) return false;
  return i < floor || CLASS[bytes[i]!] !== 0;
}

/**
 * Steps back over white space and comments from `i`; returns the index of the first byte that is
 * neither (below `floor` when the budget ran out). A comment ends at a line break, so one is looked
 * for only on a line the walk entered through its break: the first `%` on that line starts it (even
 * inside a string, which can only make more byte runs count as separators). Each step reads only the
 * line it entered, and never past the budget.
 */
function skipBack(bytes: Buffer, i: number, floor: number): number {
  for (;;) {
    let lineBreak = false;
    while (i >= floor && CLASS[bytes[i]!] === 1) {
      if (bytes[i] === 0x0a || bytes[i] === 0x0d) lineBreak = true;
      i--;
    }
    if (i < floor || !lineBreak) return i;
    // The line's start: the nearest break back from here, so a line is read once, however long the budget.
    let lineStart = i;
    while (lineStart >= floor && bytes[lineStart] !== 0x0a && bytes[lineStart] !== 0x0d) lineStart--;
    if (lineStart < floor && floor > 0) return floor - 1; // the line starts before the budget: undecided
    let comment = lineStart + 1;
    while (comment <= i && bytes[comment] !== 0x25) comment++;
    if (comment > i) return i;
    i = comment - 1;
  }
}
