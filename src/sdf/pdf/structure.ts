import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRef,
  PDFStream,
  PDFString,
  ParseSpeeds,
  type PDFObject,
} from 'pdf-lib';
import { PdfFindings, type PdfObjectView } from './findings.js';
import { FORBIDDEN_NAMES, STANDARD_14_FONTS, decodePdfName, unsafePdf as unsafe } from './names.js';

const FONT_FILES = ['FontFile', 'FontFile2', 'FontFile3'].map((n) => PDFName.of(n));

const FS = PDFName.of('FS');
const TYPE = PDFName.of('Type');
const SUBTYPE = PDFName.of('Subtype');
const BASE_FONT = PDFName.of('BaseFont');
const FONT_DESCRIPTOR = PDFName.of('FontDescriptor');
const STREAM_FILE = PDFName.of('F');
const STREAM_FILE_FILTER = PDFName.of('FFilter');

/**
 * pdf-lib interns names (one PDFName per spelling, process-wide), so the decoded text of each is
 * computed once; decoding was the largest cost of inspecting a typical file. Weak keys: the cache
 * follows pdf-lib's own pool and holds nothing beyond it.
 */
const decoded = new WeakMap<PDFName, string>();

/** pdf-lib decodes only upper-case `#XX`; decoding its output again catches the lower-case form too. */
function nameOf(name: PDFName): string {
  let text = decoded.get(name);
  if (text === undefined) {
    text = decodePdfName(name.decodeText());
    decoded.set(name, text);
  }
  return text;
}

/**
 * The second half of inspectPdf for a file the strict pass could not settle: pdf-lib's parser (which
 * expands object streams) for the page tree, every object's names, external streams and fonts. It is a
 * module of its own, loaded on first use, so that a process or a page that only ever meets plain files
 * never loads pdf-lib.
 */
export async function inspectStructure(pdf: Buffer): Promise<string[]> {
  let doc: PDFDocument;
  try {
    // throwOnInvalidObject: an object the parser cannot read is one we cannot vouch for.
    doc = await PDFDocument.load(pdf, {
      throwOnInvalidObject: true,
      updateMetadata: false,
      parseSpeed: ParseSpeeds.Fastest,
    });
  } catch (error) {
    throw unsafe(`visual.pdf cannot be parsed: ${(error as Error).message.split('\n')[0]}`);
  }

  // Rule 11: what people read must be there: a page tree with at least one page.
  let pages: number;
  try {
    pages = doc.getPageCount();
  } catch (error) {
    const reason = error instanceof RangeError ? 'its page tree loops' : (error as Error).message.split('\n')[0];
    throw unsafe(`visual.pdf has no readable page tree: ${reason}`);
  }
  if (pages === 0) throw unsafe('visual.pdf has no pages');

  const warnings = new Set<string>();
  const lookup = (obj: PDFObject | undefined): PDFObject | undefined =>
    obj instanceof PDFRef ? doc.context.lookup(obj) : obj;
  const findings = new PdfFindings(objectView(lookup));

  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    const where = `object ${ref.objectNumber} ${ref.generationNumber}`;
    const stack: PDFObject[] = [object];
    while (stack.length > 0) {
      const current = stack.pop()!;
      if (current instanceof PDFStream) {
        // F8 / rule 2: a stream whose data lives in an external file.
        if (current.dict.has(STREAM_FILE) || current.dict.has(STREAM_FILE_FILTER)) {
          throw unsafe(`visual.pdf ${where} is a stream with external data (rule 2)`);
        }
        stack.push(current.dict);
      } else if (current instanceof PDFDict) {
        checkDict(current, where, lookup, warnings);
        findings.visit(current);
        for (const [key, value] of current.entries()) {
          if (FORBIDDEN_NAMES.has(nameOf(key))) throw unsafe(`visual.pdf ${where} contains /${nameOf(key)} (rule 3)`);
          stack.push(value);
        }
      } else if (current instanceof PDFArray) {
        stack.push(...current.asArray());
      } else if (current instanceof PDFName && FORBIDDEN_NAMES.has(nameOf(current))) {
        throw unsafe(`visual.pdf ${where} contains /${nameOf(current)} (rule 3)`);
      }
    }
  }
  return [...warnings, ...findings.warnings()];
}

/** pdf-lib's objects as findings.ts reads them; keys are compared by their decoded text. */
function objectView(lookup: (obj: PDFObject | undefined) => PDFObject | undefined): PdfObjectView<PDFObject> {
  const dictOf = (v: PDFObject | undefined): PDFDict | undefined =>
    v instanceof PDFDict ? v : v instanceof PDFStream ? v.dict : undefined;
  return {
    resolve: lookup,
    refKey: (v) => (v instanceof PDFRef ? v.objectNumber * 100_000 + v.generationNumber : undefined),
    get: (v, key) => {
      let found: PDFObject | undefined;
      for (const [name, value] of dictOf(v)?.entries() ?? []) if (nameOf(name) === key) found = value;
      return found;
    },
    isDict: (v) => v instanceof PDFDict,
    keys: (v) => (v instanceof PDFDict ? [...new Set(v.keys().map(nameOf))] : undefined),
    name: (v) => (v instanceof PDFName ? nameOf(v) : undefined),
    rawString: (v, max) =>
      v instanceof PDFString
        ? { raw: v.asString().slice(0, max), hex: false }
        : v instanceof PDFHexString
          ? { raw: v.asString().slice(0, max), hex: true }
          : undefined,
    number: (v) => (v instanceof PDFNumber ? v.asNumber() : undefined),
    items: (v) => (v instanceof PDFArray ? v.asArray() : undefined),
  };
}

function checkDict(
  dict: PDFDict,
  where: string,
  lookup: (obj: PDFObject | undefined) => PDFObject | undefined,
  warnings: Set<string>,
): void {
  const fs = lookup(dict.get(FS));
  if (fs instanceof PDFName && nameOf(fs) === 'URL') {
    throw unsafe(`visual.pdf ${where} has a file specification that points at a URL (rule 2)`);
  }
  // F8 / rule 2: a font is any dictionary typed /Font, and also one that leaves /Type out but carries a
  // key only fonts have: viewers draw with it all the same, from a system font when it is not embedded.
  const type = lookup(dict.get(TYPE));
  const typed = type instanceof PDFName && nameOf(type) === 'Font';
  if (!typed && !dict.has(BASE_FONT) && !dict.has(FONT_DESCRIPTOR)) return;
  const subtype = lookup(dict.get(SUBTYPE));
  const subtypeName = subtype instanceof PDFName ? nameOf(subtype) : '';
  // Type0 fonts are judged through their descendant CIDFont; Type3 glyphs are content streams in the file.
  if (subtypeName === 'Type0' || subtypeName === 'Type3') return;
  const baseFont = lookup(dict.get(BASE_FONT));
  const fullName = baseFont instanceof PDFName ? nameOf(baseFont) : '(unnamed)';
  const descriptor = lookup(dict.get(FONT_DESCRIPTOR));
  const embedded = descriptor instanceof PDFDict && FONT_FILES.some((key) => descriptor.has(key));
  if (embedded) return;
  const name = fullName.replace(/^[A-Z]{6}\+/, '');
  if (STANDARD_14_FONTS.has(name)) {
    // F8: standard-14 fonts may be unembedded; every viewer renders them offline.
    warnings.add(`visual.pdf: standard font ${name} is not embedded`);
    return;
  }
  throw unsafe(`visual.pdf ${where}: font ${fullName} (${subtypeName || 'unknown type'}) is not embedded (rule 2)`);
}
