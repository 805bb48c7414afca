import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { actionPdf } from '../testing/pdf-actions.js';
import { blankPdf, buildPdf, hiddenObjectPdf } from '../testing/pdf-builder.js';
import { buildSdf } from '../testing/build-sdf.js';
import { validate } from '../validate.js';
import { inspectPdf } from './inspect.js';
import { scanNames } from './tokenizer.js';

async function pdfError(pdf: Buffer): Promise<string> {
  try {
    await inspectPdf(pdf);
    return 'accepted';
  } catch (error) {
    return error instanceof SdfError ? error.code : String(error);
  }
}

/** JavaScript placed so that it lands inside a compressed object stream, out of reach of a byte scan. */
async function javascriptInObjectStream(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage();
  const action = doc.context.obj({ S: 'JavaScript', JS: PDFString.of('app.alert(1)') });
  doc.catalog.set(PDFName.of('OpenAction'), doc.context.register(action));
  return Buffer.from(await doc.save({ useObjectStreams: true }));
}

describe('visual.pdf inspection (F8)', () => {
  it('accepts a plain PDF', async () => {
    expect(await inspectPdf(blankPdf())).toEqual([]);
  });

  it('sees /JavaScript inside an object stream', async () => {
    const pdf = await javascriptInObjectStream();
    expect(pdf.includes(Buffer.from('JavaScript'))).toBe(false); // only the parser can find it
    expect(await pdfError(pdf)).toBe('SDF_ERROR_UNSAFE_PDF');
    expect((await validate(buildSdf({ pdf }))).error).toMatchObject({
      code: 'SDF_ERROR_UNSAFE_PDF',
      file: 'visual.pdf',
    });
  });

  it('decodes #xx escapes in names, in either case', async () => {
    expect([...scanNames(Buffer.from('<< /S /J#61vaScript /J#53 (x) /#6a#73 1 >>'))]).toEqual([
      'S',
      'JavaScript',
      'JS',
      'js',
    ]);
    const pdf = blankPdf('/OpenAction << /S /J#61vaScript /J#53 (app.alert(1)) >>');
    expect(await pdfError(pdf)).toBe('SDF_ERROR_UNSAFE_PDF');
  });

  it.each([
    ['/Launch', '/OpenAction << /S /Launch /F (calc.exe) >>'],
    ['/OpenAction JavaScript', '/OpenAction << /S /JavaScript /JS (app.alert(1)) >>'],
    ['/AA with /SubmitForm', '/AA << /WC << /S /SubmitForm /F (https://example.com) >> >>'],
    ['/GoToR', '/OpenAction << /S /GoToR /F (other.pdf) /D [0 /Fit] >>'],
    ['/XFA', '/AcroForm << /Fields [] /XFA 5 0 R >>'],
    ['/FS /URL', '/Names << /EmbeddedFiles << /Names [(a) << /Type /Filespec /FS /URL /F (https://x.test/a) >>] >> >>'],
  ])('rejects %s', async (_label, catalog) => {
    expect(await pdfError(blankPdf(catalog))).toBe('SDF_ERROR_UNSAFE_PDF');
  });

  it('ignores the words in strings, and allows a URI action on opening with a warning', async () => {
    const pdf = blankPdf('/Lang (en /JavaScript-free) /OpenAction << /S /URI /URI (https://example.com) >>');
    expect(await inspectPdf(pdf)).toEqual([
      'PDF_OPEN_ACTION_URI: visual.pdf contacts https://example.com as soon as it is opened',
    ]);
  });

  it('rejects a non-embedded TrueType font', async () => {
    const pdf = blankPdf('', '<< /Font << /F1 5 0 R >> >>', [
      '<< /Type /Font /Subtype /TrueType /BaseFont /Arial /FontDescriptor 6 0 R >>',
      '<< /Type /FontDescriptor /FontName /Arial /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>',
    ]);
    expect(await pdfError(pdf)).toBe('SDF_ERROR_UNSAFE_PDF');
  });

  it.each([
    ['without /Type', '<< /Subtype /TrueType /BaseFont /Arial /FontDescriptor 6 0 R >>'],
    ['with another /Type', '<< /Type /Other /Subtype /TrueType /BaseFont /Arial >>'],
    ['with only a descriptor', '<< /Subtype /TrueType /FontDescriptor 6 0 R >>'],
  ])('rejects a non-embedded font %s, which viewers still draw with a system font', async (_label, font) => {
    const pdf = blankPdf('', '<< /Font << /F1 5 0 R >> >>', [
      font,
      '<< /Type /FontDescriptor /FontName /Arial /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>',
    ]);
    expect(await pdfError(pdf)).toBe('SDF_ERROR_UNSAFE_PDF');
  });

  it('warns, and only warns, about an unembedded Helvetica', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage().drawText('INV-2026-00142', { font, x: 50, y: 700 });
    const pdf = Buffer.from(await doc.save());
    expect(await inspectPdf(pdf)).toEqual(['visual.pdf: standard font Helvetica is not embedded']);
    const result = await validate(buildSdf({ pdf }));
    expect(result.valid).toBe(true);
    expect(result.warnings).toContain('visual.pdf: standard font Helvetica is not embedded');
  });

  it.each(['stream', 'string', 'comment', 'stream, header split by a comment'] as const)(
    'rejects an object hidden in a %s, which the cross-reference table points at',
    async (place) => {
      const pdf = hiddenObjectPdf(place);
      // A reader that parses in order never meets object 5; the only /JavaScript is inside skipped bytes.
      expect([...scanNames(pdf)]).not.toContain('JavaScript');
      await expect(inspectPdf(pdf)).rejects.toThrow(/object header inside a stream, a string or a comment/);
      expect(await pdfError(pdf)).toBe('SDF_ERROR_UNSAFE_PDF');
    },
  );

  it('accepts the words of an object header that are not one', async () => {
    const content = '% an obj in a comment, 5 0 not before it\nBT (obj 1 0 endobj) Tj ET';
    const pdf = blankPdf('/Lang (1 endobj 2 objection obj)', '<< >>', [
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    ]);
    expect(await pdfError(pdf)).toBe('accepted');
  });

  it.each([
    ['no pages', ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>']],
    ['no catalog', ['<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']],
    ['a page tree that loops', ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [2 0 R] /Count 1 >>']],
  ])('rejects a PDF with %s: there is nothing to read (rule 11)', async (_label, objects) => {
    await expect(inspectPdf(buildPdf(objects))).rejects.toThrow(/visual.pdf has no (pages|readable page tree)/);
  });

  it('rejects something that is not a PDF, and an unparseable one', async () => {
    expect(await pdfError(Buffer.from('GIF89a'))).toBe('SDF_ERROR_UNSAFE_PDF');
    expect(await pdfError(buildPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [ >>']))).toBe(
      'SDF_ERROR_UNSAFE_PDF',
    );
  });

  describe('what the file does without being asked: warnings, the file stays valid', () => {
    it.each([true, false])(
      'an /OpenAction URI, a page /AA URI and an embedded file (object streams: %s)',
      async (useObjectStreams) => {
        const pdf = await actionPdf({
          openActionUri: 'https://tracker.example/o.gif?reader=42',
          pageOpenUri: 'https://pixel.example/p',
          embeddedFile: { name: 'factur-x.xml', bytes: Buffer.from('<Invoice/>'), mimeType: 'text/xml' },
          useObjectStreams,
        });
        // In object streams nothing of it is visible to a byte scan: only the parsers can find it.
        if (useObjectStreams) expect(pdf.includes(Buffer.from('tracker.example'))).toBe(false);
        const result = await validate(buildSdf({ pdf }));
        expect(result).toMatchObject({ valid: true, checks: { pdf: 'pass' } });
        expect(result.warnings).toEqual([
          'PDF_OPEN_ACTION_URI: visual.pdf contacts https://tracker.example as soon as it is opened',
          'PDF_AUTO_ACTION_URI: visual.pdf contacts https://pixel.example without a click (additional action /O)',
          'PDF_EMBEDDED_FILE: visual.pdf embeds the file "factur-x.xml" (10 bytes)',
        ]);
      },
    );

    it('says nothing of a /URI link a person clicks, nor of an /OpenAction that shows a page', async () => {
      expect(await inspectPdf(await actionPdf({ linkUri: 'https://click.example' }))).toEqual([]);
      expect(await inspectPdf(blankPdf('/OpenAction [3 0 R /Fit]'))).toEqual([]);
    });

    it('follows /Next chains, through loops, and finds URI actions of annotations and form fields', async () => {
      const pdf = buildPdf([
        '<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [6 0 R] >> >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Annots [5 0 R] >>',
        '<< /S /GoTo /D [3 0 R /Fit] /Next [7 0 R 4 0 R] >>',
        '<< /Type /Annot /Subtype /Widget /Rect [0 0 10 10] /AA << /E 4 0 R >> >>',
        '<< /FT /Tx /T (total) /AA << /Fo << /S /URI /URI (https://field.example/) >> >> >>',
        '<< /S /URI /URI (https://next.example/) /Next 4 0 R >>',
      ]);
      expect(await inspectPdf(pdf)).toEqual([
        'PDF_AUTO_ACTION_URI: visual.pdf contacts https://field.example without a click (additional action /Fo)',
        'PDF_AUTO_ACTION_URI: visual.pdf contacts https://next.example without a click (additional action /E)',
      ]);
    });

    it('cleans what it shows of a file name: control characters, lone surrogates, length', async () => {
      // UTF-16BE: "a", a lone high surrogate, a tab, "b", then 150 "x".
      const name = `FEFF0061D80000090062${'0078'.repeat(150)}`;
      const pdf = blankPdf(
        `/Names << /EmbeddedFiles << /Names [(a) << /UF <${name}> /EF << /F 5 0 R >> >>] >> >>`,
        '<< >>',
        ['<< /Length 3 >>\nstream\nabc\nendstream'],
      );
      const [warning] = await inspectPdf(pdf);
      expect(warning).toBe(`PDF_EMBEDDED_FILE: visual.pdf embeds the file "a??b${'x'.repeat(96)}…"`);
    });

    it('lists 20 findings of a code and counts the rest', async () => {
      const specs = Array.from(
        { length: 25 },
        (_, i) => `(f${i}) << /F (file-${String(i).padStart(2, '0')}.txt) /EF << /F 5 0 R >> >>`,
      );
      const pdf = blankPdf(`/Names << /EmbeddedFiles << /Names [${specs.join(' ')}] >> >>`, '<< >>', [
        '<< /Length 3 >>\nstream\nabc\nendstream',
      ]);
      const warnings = await inspectPdf(pdf);
      expect(warnings).toHaveLength(21);
      expect(warnings[0]).toBe('PDF_EMBEDDED_FILE: visual.pdf embeds the file "file-00.txt"');
      expect(warnings[19]).toBe('PDF_EMBEDDED_FILE: visual.pdf embeds the file "file-19.txt"');
      expect(warnings[20]).toBe('PDF_EMBEDDED_FILE: visual.pdf has 5 more of these');
    });

    it('reads each action once however many pages point at it: a hostile fan-out ends at once', async () => {
      // 3,000 pages share one /AA dictionary of every trigger, each the head of a chain of 3,000 actions:
      // read per page, that is 3,000 x 20 x 3,000 steps; read once, 20 x 3,000.
      const pages = 3_000;
      const chain = 3_000;
      const objects = [
        '<< /Type /Catalog /Pages 2 0 R >>',
        `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${i + 4} 0 R`).join(' ')}] /Count ${pages} >>`,
        `<< ${['O', 'C', 'E', 'X', 'D', 'U', 'Fo', 'Bl', 'PO', 'PC', 'PV', 'PI', 'K', 'F', 'V', 'WC', 'WS', 'DS', 'WP', 'DP'].map((t) => `/${t} ${pages + 4} 0 R`).join(' ')} >>`,
        ...Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /AA 3 0 R >>'),
        ...Array.from({ length: chain }, (_, i) =>
          i + 1 < chain
            ? `<< /S /GoTo /D [4 0 R /Fit] /Next ${pages + 5 + i} 0 R >>`
            : '<< /S /URI /URI (https://end.example) >>',
        ),
      ];
      const pdf = buildPdf(objects);
      const warnings = await inspectPdf(pdf);
      // The strict reader settles it; the full inspection reads it the same way.
      expect(await inspectPdf(pdf, { fullOnly: true })).toEqual(warnings);
      expect(warnings).toHaveLength(20);
      expect(warnings).toContain(
        'PDF_AUTO_ACTION_URI: visual.pdf contacts https://end.example without a click (additional action /O)',
      );
    });
  });
});
