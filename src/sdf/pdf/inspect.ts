import { findHiddenObjectHeader } from './hidden.js';
import { FORBIDDEN_NAMES, unsafePdf as unsafe } from './names.js';
import { quickInspect, quickInspectWith, type StreamInflater } from './quick.js';
import { scanNames } from './tokenizer.js';

/**
 * F8 and rules 2-3: visual.pdf must parse, hold no executable content and reach nothing outside itself.
 * Returns warnings (standard-14 fonts that are not embedded). A clean file in the plain form producers
 * write is settled by one strict pass (quick.ts); any other gets two: a lexical scan for names anywhere
 * in the file, and pdf-lib's parser (which expands object streams) for structure and fonts.
 * `fullOnly` skips the strict pass (tests compare the two paths with it); `inflate` decodes the strict
 * pass's Flate streams in place of Node's zlib (the browser reader's native inflate).
 */
export async function inspectPdf(
  pdf: Buffer,
  options: { fullOnly?: boolean; inflate?: StreamInflater } = {},
): Promise<string[]> {
  const head = pdf.subarray(0, 1024).toString('latin1');
  if (!head.includes('%PDF-')) throw unsafe('visual.pdf is not a PDF (no %PDF- header)');

  // Plain, certainly clean files are settled by the strict reader, which reads every token the lexical
  // scan below would (see quickInspect); everything else by the scan and pdf-lib.
  const quick = options.fullOnly
    ? undefined
    : options.inflate
      ? await quickInspectWith(pdf, options.inflate)
      : quickInspect(pdf);
  if (quick !== undefined) return quick;

  const objTokens = new Set<number>();
  for (const name of scanNames(pdf, objTokens)) {
    if (FORBIDDEN_NAMES.has(name)) throw unsafe(`visual.pdf contains /${name} (rule 3)`);
  }
  const hidden = findHiddenObjectHeader(pdf, objTokens);
  if (hidden >= 0) {
    throw unsafe(`visual.pdf has an object header inside a stream, a string or a comment (byte ${hidden}; rule 3)`);
  }

  // pdf-lib, loaded here on first use: most files never need it.
  const { inspectStructure } = await import('./structure.js');
  return inspectStructure(pdf);
}
