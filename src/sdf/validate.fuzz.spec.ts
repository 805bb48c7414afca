import { fc, it } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { SDF_ERROR_CODES } from './errors.js';
import { pack } from './producer/pack.js';
import { generateKeyPair } from './signature/keys.js';
import { signArchive } from './signature/sign.js';
import { INVOICE_SCHEMA, invoiceData } from './testing/build-sdf.js';
import { fuzzRuns, mutationsOf } from './testing/mutations.js';
import { blankPdf } from './testing/pdf-builder.js';
import { buildZip } from './testing/zip-builder.js';
import { validate, type ValidationResult } from './validate.js';
import { openArchive } from './zip/archive.js';

/**
 * Fuzzing the format core (fast-check): damaged copies of a valid signed archive, and archives whose
 * JSON entries or PDF are random or damaged. validate() must always answer (never throw, never hang),
 * with a well-formed result, and must never call an archive valid whose content differs from what was
 * signed: a changed byte is either caught by a CRC or by the signature. FUZZ_RUNS sets the cases per
 * target (5,000 by default; `npm run fuzz` runs more).
 */
const { archive: unsigned } = await pack({
  data: invoiceData(),
  schema: INVOICE_SCHEMA as unknown as Record<string, unknown>,
  meta: { document_type: 'invoice', issuer: 'Acme Supplies GmbH', schema_id: 'invoice/v1' },
  pdf: blankPdf(),
});
const signed = await signArchive(unsigned, { privateKeyPem: generateKeyPair('ECDSA-P256').privateKeyPem });
const entries = (await openArchive(signed)).files;
const runs = fuzzRuns();
/** Generous: a case takes about a millisecond, a damaged schema up to a few (its compilation). */
const timeout = 30_000 + runs * 20;
/**
 * Cases fast-check once found, kept and run first every time: the signature renamed into vendor/ leaves
 * an unsigned archive that is valid as such (the property then asks only for the signed entries).
 */
const regressions = [
  {
    kind: 'renamed entry',
    bytes: buildZip(
      [...entries].map(([name, data]) => ({ name: name === 'signature.sig' ? 'vendor/x.bin' : name, data })),
    ),
  },
];

function expectWellFormed(result: ValidationResult): void {
  expect(typeof result.valid).toBe('boolean');
  if (result.valid) expect(result.error ?? null).toBeNull();
  else expect(SDF_ERROR_CODES).toContain(result.error!.code);
}

/**
 * What a valid verdict on a damaged copy allows: every entry that was signed is there with its bytes.
 * Stripping the signature (renaming or dropping signature.sig) leaves an unsigned archive, which may be
 * valid as such; a signed verdict needs exactly the signed entries.
 */
async function keepsSignedContent(bytes: Buffer, stillSigned: boolean): Promise<boolean> {
  const files = (await openArchive(bytes)).files;
  for (const [name, data] of entries) {
    if (name === 'signature.sig' && !stillSigned) continue;
    if (!files.get(name)?.equals(data)) return false;
  }
  return !stillSigned || files.size === entries.size;
}

describe('validate() on damaged archives', () => {
  it('the undamaged archive is valid and signed (the premise)', async () => {
    expect(await validate(signed)).toMatchObject({ valid: true, is_signed: true });
  });

  it.prop([mutationsOf(signed, entries)], { numRuns: runs, examples: regressions.map((r) => [r]) })(
    'answers every damaged copy, and calls one valid only when every signed entry is still what was signed',
    async ({ bytes }) => {
      const result = await validate(bytes);
      expectWellFormed(result);
      if (result.valid) expect(await keepsSignedContent(bytes, result.is_signed)).toBe(true);
    },
    timeout,
  );
});

describe('validate() on random and damaged entries', () => {
  const withEntry = (name: string, data: Buffer) =>
    buildZip(
      [...entries].filter(([n]) => n !== 'signature.sig').map(([n, d]) => ({ name: n, data: n === name ? data : d })),
    );

  const jsonText = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string(),
    fc.tuple(fc.nat(), fc.string({ maxLength: 4 })).map(([at, s]) => {
      const text = entries.get('data.json')!.toString('utf8');
      const i = at % (text.length + 1);
      return text.slice(0, i) + s + text.slice(i);
    }),
  );

  it.prop([fc.constantFrom('data.json', 'meta.json', 'schema.json'), jsonText], { numRuns: runs })(
    'answers archives whose data, meta or schema is random or damaged JSON',
    async (name, text) => {
      expectWellFormed(await validate(withEntry(name, Buffer.from(text, 'utf8'))));
    },
    timeout,
  );

  const pdf = entries.get('visual.pdf')!;
  const damagedPdf = fc.oneof(
    fc
      .array(fc.tuple(fc.nat({ max: pdf.length - 1 }), fc.nat({ max: 7 })), { minLength: 1, maxLength: 8 })
      .map((flips) => {
        const bytes = Buffer.from(pdf);
        for (const [at, bit] of flips) bytes[at] = bytes[at]! ^ (1 << bit);
        return bytes;
      }),
    fc.nat({ max: pdf.length }).map((n) => pdf.subarray(0, n)),
    fc
      .tuple(
        fc.nat({ max: pdf.length }),
        fc.constantFrom(
          '/JavaScript',
          '/JS',
          '/Launch',
          '/OpenAction',
          '/AA',
          '/XFA',
          '/URI',
          'obj',
          'endobj',
          'stream',
          '<<',
          '>>',
          '#4A',
        ),
      )
      .map(([at, token]) => Buffer.concat([pdf.subarray(0, at), Buffer.from(token), pdf.subarray(at)])),
  );

  it.prop([damagedPdf], { numRuns: runs })(
    'answers archives whose PDF is damaged',
    async (bytes) => {
      expectWellFormed(await validate(withEntry('visual.pdf', bytes)));
    },
    timeout,
  );
});
