/**
 * F8, what a viewer does without being asked: warnings (never refusals) for a visual.pdf that calls a
 * URL as it is opened (`/OpenAction` leading to a `/URI` action), that calls one on an automatic
 * trigger (an `/AA` additional action of the catalog, a page, an annotation or a form field: a page
 * opening, the pointer entering a field, the document closing), and for the files it embeds (a file
 * specification with `/EF`; PDF/A-3 invoices embed their XML this way, so they stay allowed). A file
 * that calls a URL when it is opened is a tracking beacon for whoever reads it. `/URI` link annotations
 * a person clicks are not findings. `/Launch`, `/SubmitForm`, `/ImportData` and the other actions F8
 * names are refused wherever they are, before this runs.
 *
 * Both inspections (the strict reader of quick.ts and pdf-lib's parser in structure.ts) feed every
 * dictionary of the file's objects, those inside object streams included, through one `PdfFindings`,
 * each through a small view of its own object model, so the two give the same warnings. The warnings
 * do not depend on the order the dictionaries come in: each code's messages are sorted, and at most
 * `LISTED_PER_CODE` of them are listed, then a count of the rest.
 */

/** How one inspection's objects are read: one level of indirection at a time. */
export interface PdfObjectView<V> {
  /** The object a reference points at (undefined when there is none); any other value itself. */
  resolve(value: V | undefined): V | undefined;
  /** A number identifying a reference (`num * 100000 + gen`), undefined for a direct value. */
  refKey(value: V | undefined): number | undefined;
  /** The value under `key` (the decoded name) of a dictionary, or of a stream's dictionary. */
  get(dict: V, key: string): V | undefined;
  /** Whether `value` is a dictionary (not a stream). */
  isDict(value: V | undefined): boolean;
  /** The keys (decoded names) of a dictionary; undefined when `value` is not one. */
  keys(value: V | undefined): string[] | undefined;
  /** The decoded text of a name; undefined when `value` is not a name. */
  name(value: V | undefined): string | undefined;
  /** A string's raw bytes between its delimiters, as latin1, at most `max` of them; undefined when not a string. */
  rawString(value: V | undefined, max: number): { raw: string; hex: boolean } | undefined;
  /** A number's value; undefined when `value` is not a number. */
  number(value: V | undefined): number | undefined;
  /** An array's items; undefined when `value` is not an array. */
  items(value: V | undefined): V[] | undefined;
}

export const PDF_FINDING_CODES = ['PDF_OPEN_ACTION_URI', 'PDF_AUTO_ACTION_URI', 'PDF_EMBEDDED_FILE'] as const;
export type PdfFindingCode = (typeof PDF_FINDING_CODES)[number];

/** Messages listed per code; the rest are counted. */
export const LISTED_PER_CODE = 20;
/** Distinct messages kept per code: a file cannot make the inspection hold more than this many. */
export const KEPT_PER_CODE = 1000;
/** Bytes of a string read for a URL or a file name: the host is near the start, a name is short. */
const MAX_STRING_BYTES = 2048;
/** Characters of a file name or of an address that does not parse, as shown. */
const MAX_SHOWN = 100;
/** The keys of `/AA` (PDF 1.7, tables 194-197): annotation, page, form field and document triggers. */
const TRIGGERS: ReadonlySet<string> = new Set([
  'E',
  'X',
  'D',
  'U',
  'Fo',
  'Bl',
  'PO',
  'PC',
  'PV',
  'PI',
  'O',
  'C',
  'K',
  'F',
  'V',
  'WC',
  'WS',
  'DS',
  'WP',
  'DP',
]);

export class PdfFindings<V> {
  private readonly found = new Map<PdfFindingCode, Set<string>>(PDF_FINDING_CODES.map((code) => [code, new Set()]));
  /** Codes that reached `KEPT_PER_CODE`: their count is a lower bound. */
  readonly overflowed = new Set<PdfFindingCode>();
  /** References already followed, by kind: each action, `/AA` dictionary or `/Next` list is read once. */
  private readonly followed = new Map<string, Set<number>>();

  constructor(private readonly view: PdfObjectView<V>) {}

  /** Reads one dictionary of the file (a stream's dictionary included). */
  visit(dict: V): void {
    const { view } = this;
    const open = view.get(dict, 'OpenAction');
    // An array is a destination (a page to show), not an action.
    if (open !== undefined) {
      this.follow(open, 'open', (target) => [
        'PDF_OPEN_ACTION_URI',
        `visual.pdf contacts ${target} as soon as it is opened`,
      ]);
    }
    const aa = view.get(dict, 'AA');
    if (aa !== undefined) {
      const triggers = this.once('aa', aa);
      for (const trigger of view.keys(triggers) ?? []) {
        // The triggers of the catalog, pages, annotations and form fields; viewers ignore other keys.
        if (!TRIGGERS.has(trigger)) continue;
        this.follow(view.get(triggers!, trigger), `auto ${trigger}`, (target) => [
          'PDF_AUTO_ACTION_URI',
          `visual.pdf contacts ${target} without a click (additional action /${trigger})`,
        ]);
      }
    }
    if (view.get(dict, 'EF') !== undefined) this.embedded(dict);
  }

  /** The warnings, each code's sorted, in the order of PDF_FINDING_CODES. */
  warnings(): string[] {
    const out: string[] = [];
    for (const [code, messages] of this.found) {
      const sorted = [...messages].sort();
      out.push(...sorted.slice(0, LISTED_PER_CODE).map((message) => `${code}: ${message}`));
      const rest = sorted.length - LISTED_PER_CODE;
      if (rest > 0) {
        const count = this.overflowed.has(code) ? `at least ${rest}` : String(rest);
        out.push(`${code}: visual.pdf has ${count} more of these`);
      }
    }
    return out;
  }

  private add(code: PdfFindingCode, message: string): void {
    const messages = this.found.get(code)!;
    if (messages.has(message)) return;
    if (messages.size >= KEPT_PER_CODE) {
      this.overflowed.add(code);
      return;
    }
    messages.add(message);
  }

  /** The object `value` resolves to, or undefined when it is a reference already followed as `kind`. */
  private once(kind: string, value: V | undefined): V | undefined {
    const ref = this.view.refKey(value);
    if (ref !== undefined) {
      let seen = this.followed.get(kind);
      if (seen === undefined) this.followed.set(kind, (seen = new Set()));
      if (seen.has(ref)) return undefined;
      seen.add(ref);
    }
    return this.view.resolve(value);
  }

  /**
   * An action and the chain of its `/Next` actions (a dictionary or an array of them). Each reference is
   * followed once per `mark` (the kind of start and its trigger), so the actions reached, and with them
   * the warnings, are the same whatever order the dictionaries come in, and the work stays within the
   * number of objects times the number of triggers.
   */
  private follow(first: V | undefined, mark: string, warn: (target: string) => [PdfFindingCode, string]): void {
    const { view } = this;
    const stack: (V | undefined)[] = [first];
    while (stack.length > 0) {
      const action = this.once(mark, stack.pop());
      if (!view.isDict(action)) continue;
      if (view.name(view.resolve(view.get(action!, 'S'))) === 'URI') {
        const uri = view.rawString(view.resolve(view.get(action!, 'URI')), MAX_STRING_BYTES);
        if (uri !== undefined) this.add(...warn(describeAddress(pdfStringBytes(uri))));
      }
      const next = this.once(mark, view.get(action!, 'Next'));
      const list = view.items(next);
      if (list !== undefined) for (let i = list.length - 1; i >= 0; i--) stack.push(list[i]);
      else if (view.isDict(next)) stack.push(next);
    }
  }

  /** A file specification with `/EF`: the file's name and, when its stream declares it, its size. */
  private embedded(spec: V): void {
    const { view } = this;
    const streams = view.resolve(view.get(spec, 'EF'));
    if (!view.isDict(streams)) return;
    const nameValue = view.resolve(view.get(spec, 'UF')) ?? view.resolve(view.get(spec, 'F'));
    const raw = view.rawString(nameValue, MAX_STRING_BYTES);
    const name = raw === undefined ? '(no name)' : `"${shown(pdfText(pdfStringBytes(raw)))}"`;
    const stream = view.resolve(view.get(streams!, 'UF')) ?? view.resolve(view.get(streams!, 'F'));
    const params = stream === undefined ? undefined : view.resolve(view.get(stream, 'Params'));
    const size = params === undefined ? undefined : view.number(view.resolve(view.get(params, 'Size')));
    const sized = size !== undefined && Number.isSafeInteger(size) && size >= 0 ? ` (${size} bytes)` : '';
    this.add('PDF_EMBEDDED_FILE', `visual.pdf embeds the file ${name}${sized}`);
  }
}

/** The bytes of a PDF string from its raw text (PDF 1.7, 7.3.4): escapes and octal codes, or hex digits. */
export function pdfStringBytes({ raw, hex }: { raw: string; hex: boolean }): number[] {
  const bytes: number[] = [];
  if (hex) {
    const digits = raw.replace(/[^0-9A-Fa-f]/g, '');
    for (let i = 0; i < digits.length; i += 2) bytes.push(parseInt(digits.slice(i, i + 2).padEnd(2, '0'), 16));
    return bytes;
  }
  const ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, b: 0x08, f: 0x0c };
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x0d) {
      // An end of line inside a string reads as a line feed, whatever its form.
      if (raw.charCodeAt(i + 1) === 0x0a) i++;
      bytes.push(0x0a);
      continue;
    }
    if (c !== 0x5c) {
      bytes.push(c & 0xff);
      continue;
    }
    const e = raw[++i];
    if (e === undefined) break;
    if (e in ESCAPES) bytes.push(ESCAPES[e]!);
    else if (e >= '0' && e <= '7') {
      let octal = e;
      while (octal.length < 3 && raw[i + 1] !== undefined && raw[i + 1]! >= '0' && raw[i + 1]! <= '7')
        octal += raw[++i];
      bytes.push(parseInt(octal, 8) & 0xff);
    } else if (e === '\r') {
      if (raw[i + 1] === '\n') i++; // a line continuation
    } else if (e !== '\n') bytes.push(e.charCodeAt(0) & 0xff);
  }
  return bytes;
}

/** PDFDocEncoding's bytes 0x80-0xA0 where they differ from Latin-1 (PDF 1.7, Annex D). */
const PDF_DOC_HIGH = '•†‡…—–ƒ⁄‹›−‰„“”‘’‚™ﬁﬂŁŒŠŸŽıłœšž\uFFFD€';

/** A PDF text string: UTF-16BE or UTF-8 after their byte order marks, else PDFDocEncoding. */
export function pdfText(bytes: number[]): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    let text = '';
    for (let i = 2; i + 1 < bytes.length; i += 2) text += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
    return text;
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return new TextDecoder('utf-8').decode(Uint8Array.from(bytes.slice(3)));
  }
  return bytes.map((b) => (b >= 0x80 && b <= 0xa0 ? PDF_DOC_HIGH[b - 0x80]! : String.fromCharCode(b))).join('');
}

/**
 * Text from a file, fit to show and to store: control characters, lone surrogates and U+FFFD become
 * `?`, and it is cut at MAX_SHOWN characters.
 */
function shown(text: string): string {
  let out = '';
  let length = 0;
  for (const char of text) {
    if (length === MAX_SHOWN) return `${out}…`;
    const code = char.codePointAt(0)!;
    const unsafe =
      code < 0x20 || (code >= 0x7f && code < 0xa0) || (code >= 0xd800 && code <= 0xdfff) || code === 0xfffd;
    out += unsafe ? '?' : char;
    length++;
  }
  return out;
}

/**
 * Where a URI action goes, without its path and query (which carry the tracking token): the scheme and
 * host of a URL (`https://tracker.example`), the scheme alone of one without a host (`a mailto: address`).
 */
function describeAddress(bytes: number[]): string {
  const text = String.fromCharCode(...bytes).trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `an address that is not a URL ("${shown(text)}")`;
  }
  return url.hostname !== '' ? `${url.protocol}//${shown(url.hostname)}` : `a ${shown(url.protocol)} address`;
}
