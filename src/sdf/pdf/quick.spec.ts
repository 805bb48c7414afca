import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { render } from '../producer/render.js';
import { invoiceData } from '../testing/build-sdf.js';
import { actionPdf } from '../testing/pdf-actions.js';
import { blankPdf, buildPdf, hiddenObjectPdf } from '../testing/pdf-builder.js';
import { inspectPdf } from './inspect.js';
import { quickInspect, quickInspectWith } from './quick.js';

/** Outcome of an inspection: the warnings, or the error code. */
async function verdict(pdf: Buffer, fullOnly: boolean): Promise<unknown> {
  try {
    return { warnings: await inspectPdf(pdf, { fullOnly }) };
  } catch (error) {
    return { error: error instanceof SdfError ? error.code : String(error) };
  }
}

async function pdfLibDoc(
  build: (doc: PDFDocument) => Promise<void> | void,
  useObjectStreams: boolean,
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  await build(doc);
  return Buffer.from(await doc.save({ useObjectStreams }));
}

const hiddenData = 'q Q\nendstream\n<< /S /JavaScript /JS (app.alert(1)) >>\nstream\nq Q';

const nameData = 'BT /JavaScript (x) Tj ET';

const FONT_DESCRIPTOR =
  '/Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80';

/** Every PDF the F8 tests use, clean and hostile, plus pdf-lib and render() output in both layouts. */
async function corpus(): Promise<[string, Buffer][]> {
  const invoice = invoiceData();
  const long = invoiceData();
  long.line_items = Array.from({ length: 120 }, (_, i) => ({
    description: `Item ${i}`,
    quantity: 1,
    subtotal: { amount: '1.00', currency: 'EUR' },
  }));
  const catalogs: [string, string][] = [
    ['/Launch', '/OpenAction << /S /Launch /F (calc.exe) >>'],
    ['/OpenAction JavaScript', '/OpenAction << /S /JavaScript /JS (app.alert(1)) >>'],
    ['/AA with /SubmitForm', '/AA << /WC << /S /SubmitForm /F (https://example.com) >> >>'],
    ['/GoToR', '/OpenAction << /S /GoToR /F (other.pdf) /D [0 /Fit] >>'],
    ['/GoToE', '/OpenAction << /S /GoToE /D [0 /Fit] >>'],
    ['/ImportData', '/OpenAction << /S /ImportData /F (x.fdf) >>'],
    ['/RichMedia', '/OpenAction << /S /RichMedia >>'],
    ['/XFA', '/AcroForm << /Fields [] /XFA 5 0 R >>'],
    ['/FS /URL', '/Names << /EmbeddedFiles << /Names [(a) << /Type /Filespec /FS /URL /F (https://x.test/a) >>] >> >>'],
    ['/FS file', '/Names << /EmbeddedFiles << /Names [(a) << /Type /Filespec /FS /File /F (a.txt) >>] >> >>'],
    ['escaped names', '/OpenAction << /S /J#61vaScript /J#53 (app.alert(1)) >>'],
    ['lower-case escape', '/OpenAction << /S /J#61v#61Script >>'],
    ['plain escaped name', '/Lang /F#6fo'],
    ['/URI and words in strings', '/Lang (en /JavaScript-free) /OpenAction << /S /URI /URI (https://example.com) >>'],
    ['Encrypt', '/Encrypt 5 0 R'],
    ['long keys, clean', '/AVeryLongResourceName-1234 /Fine /AnotherLongResourceName-99 << /S /URI >>'],
    ['long keys, JavaScript inside', '/AVeryLongResourceName-1234 << /S /JavaScript /JS (x) >>'],
    ['/OpenAction /URI, escaped string', '/OpenAction << /S /URI /URI (http\\072//a.example/\\(x\\)) >>'],
    [
      '/OpenAction /URI, hex string',
      '/OpenAction << /S /GoTo /D [3 0 R /Fit] /Next [<< /S /URI /URI <68747470733A2F2F622E6578616D706C65> >>] >>',
    ],
    [
      '/AA of the catalog, two triggers',
      '/AA << /WC << /S /URI /URI (https://c.example) >> /DP << /S /URI /URI (x) >> /Zz << /S /URI /URI (https://ignored.example) >> >>',
    ],
    ['/OpenAction /URI, a mailto address', '/OpenAction << /S /URI /URI (mailto:someone@example.com) >>'],
  ];
  const fonts: [string, string][] = [
    ['unembedded TrueType', `<< /Type /Font /Subtype /TrueType /BaseFont /Arial /FontDescriptor 6 0 R >>`],
    ['unembedded Helvetica', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'],
    ['subset-tagged Courier', '<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+Courier >>'],
    ['embedded TrueType', `<< /Type /Font /Subtype /TrueType /BaseFont /Arial /FontDescriptor 7 0 R >>`],
    ['font type by reference', `<< /Type 8 0 R /Subtype /TrueType /BaseFont /Arial /FontDescriptor 6 0 R >>`],
    ['repeated key, standard font last', '<< /Type /Font /Subtype /Type1 /BaseFont /Arial /BaseFont /Helvetica >>'],
    ['repeated key, other font last', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /BaseFont /Arial >>'],
    ['descriptor with wrong generation', `<< /Type /Font /Subtype /TrueType /BaseFont /Arial /FontDescriptor 7 1 R >>`],
    ['unembedded TrueType without /Type', '<< /Subtype /TrueType /BaseFont /Arial /FontDescriptor 6 0 R >>'],
    ['unembedded font with only a descriptor', '<< /Subtype /TrueType /FontDescriptor 6 0 R >>'],
    ['Helvetica without /Type', '<< /Subtype /Type1 /BaseFont /Helvetica >>'],
    ['embedded TrueType without /Type', '<< /Subtype /TrueType /BaseFont /Arial /FontDescriptor 7 0 R >>'],
  ];
  const fontObjects = [
    `<< /Type /FontDescriptor /FontName /Arial ${FONT_DESCRIPTOR} >>`,
    `<< /Type /FontDescriptor /FontName /Arial ${FONT_DESCRIPTOR} /FontFile2 9 0 R >>`,
    '/Font',
    '<< /Length 4 >>\nstream\nabcd\nendstream',
  ];
  const list: [string, Buffer][] = [
    ['blank', blankPdf()],
    ['render()', await render(invoice)],
    ['render() of 120 items', await render(long)],
    ['not a PDF', Buffer.from('GIF89a')],
    ['unbalanced array', buildPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [ >>'])],
    ['stream with external data', blankPdf('', '<< >>', ['<< /Length 0 /F (x.bin) >>\nstream\n\nendstream'])],
    ['stream with a wrong /Length', buildPdf(['<< /Type /Catalog >>', '<< /Length 99 >>\nstream\nabc\nendstream'])],
    [
      // /Length spans the words, so a reader that trusts it sees one clean stream; a lexical scan stops
      // at the first `endstream` and meets /JavaScript.
      'endstream inside stream data',
      blankPdf('', '<< >>', [`<< /Length ${hiddenData.length} >>\nstream\n${hiddenData}\nendstream`]),
    ],
    [
      'a name inside stream data',
      blankPdf('', '<< >>', [`<< /Length ${nameData.length} >>\nstream\n${nameData}\nendstream`]),
    ],
    ...(['stream', 'string', 'comment', 'stream, header split by a comment'] as const).map(
      (place): [string, Buffer] => [`an object hidden in a ${place}`, hiddenObjectPdf(place)],
    ),
    ['no pages', buildPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>'])],
    ['no catalog', buildPdf(['<< /Type /Pages /Kids [] /Count 0 >>'])],
    [
      'a page tree that loops',
      buildPdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>',
        '<< /Type /Page >>',
      ]),
    ],
    [
      'a page tree of two levels',
      buildPdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        '<< /Type /Pages /Parent 2 0 R /Kids [4 0 R] /Count 1 >>',
        '<< /Type /Page /Parent 3 0 R /MediaBox [0 0 595 842] /Resources << >> >>',
      ]),
    ],
    ['junk between objects', Buffer.concat([blankPdf(), Buffer.from('garbage 1 2 3\n')])],
    ['duplicate object', Buffer.concat([blankPdf(), Buffer.from('3 0 obj\n<< /Type /Page >>\nendobj\n')])],
    ...catalogs.map(([label, catalog]): [string, Buffer] => [label, blankPdf(catalog)]),
    [
      '/Next loop',
      blankPdf('/OpenAction 5 0 R', '<< >>', [
        '<< /S /URI /URI (https://loop.example) /Next 6 0 R >>',
        '<< /S /GoTo /D [3 0 R /Fit] /Next [5 0 R 6 0 R] >>',
      ]),
    ],
    [
      'embedded file with an escaped name',
      blankPdf(
        '/Names << /EmbeddedFiles << /Names [(a) << /Type /Filespec /F (a\\(1\\).xml) /EF << /F 5 0 R >> >>] >> >>',
        '<< >>',
        ['<< /Type /EmbeddedFile /Params << /Size 3 >> /Length 3 >>\nstream\nabc\nendstream'],
      ),
    ],
    [
      '/AA in the trailer only',
      Buffer.from(
        blankPdf()
          .toString('latin1')
          .replace('/Root 1 0 R', '/Root 1 0 R /AA << /O << /S /URI /URI (https://trailer.example) >> >>'),
        'latin1',
      ),
    ],
    [
      'page /AA pointing at a missing object',
      buildPdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /AA << /O 9 0 R >> >>',
      ]),
    ],
    ...fonts.map(([label, font]): [string, Buffer] => [
      label,
      blankPdf('', '<< /Font << /F1 5 0 R >> >>', [font, ...fontObjects]),
    ]),
  ];
  for (const useObjectStreams of [true, false]) {
    const layout = useObjectStreams ? 'object streams' : 'xref table';
    list.push(
      [`pdf-lib empty (${layout})`, await pdfLibDoc((doc) => void doc.addPage(), useObjectStreams)],
      [
        `pdf-lib Helvetica (${layout})`,
        await pdfLibDoc(async (doc) => {
          const font = await doc.embedFont(StandardFonts.Helvetica);
          doc.addPage().drawText('INV-2026-00142', { font, x: 50, y: 700 });
        }, useObjectStreams),
      ],
      [
        `pdf-lib two standard fonts (${layout})`,
        await pdfLibDoc(async (doc) => {
          const page = doc.addPage();
          page.drawText('a', { font: await doc.embedFont(StandardFonts.Courier) });
          page.drawText('b', { font: await doc.embedFont(StandardFonts.TimesRoman) });
        }, useObjectStreams),
      ],
      [
        `pdf-lib JavaScript OpenAction (${layout})`,
        await pdfLibDoc((doc) => {
          doc.addPage();
          const action = doc.context.obj({ S: 'JavaScript', JS: PDFString.of('app.alert(1)') });
          doc.catalog.set(PDFName.of('OpenAction'), doc.context.register(action));
        }, useObjectStreams),
      ],
      [
        `pdf-lib /Launch in a nested dictionary (${layout})`,
        await pdfLibDoc((doc) => {
          doc.addPage();
          doc.catalog.set(PDFName.of('AA'), doc.context.obj({ WC: { S: 'Launch', F: PDFString.of('calc') } }));
        }, useObjectStreams),
      ],
      [
        `pdf-lib /FS /URL (${layout})`,
        await pdfLibDoc((doc) => {
          doc.addPage();
          doc.catalog.set(PDFName.of('X'), doc.context.register(doc.context.obj({ Type: 'Filespec', FS: 'URL' })));
        }, useObjectStreams),
      ],
      [
        `pdf-lib URI actions and an embedded file (${layout})`,
        await actionPdf({
          openActionUri: 'https://tracker.example/open?id=1',
          pageOpenUri: 'https://tracker.example/page',
          linkUri: 'https://click.example',
          embeddedFile: { name: 'factur-x.xml', bytes: Buffer.from('<x/>') },
          useObjectStreams,
        }),
      ],
      [
        `pdf-lib attachment with a MIME type (${layout})`,
        await actionPdf({
          embeddedFile: { name: 'zugferd-invoice.xml', bytes: Buffer.from('<x/>'), mimeType: 'text/xml' },
          useObjectStreams,
        }),
      ],
      [
        `pdf-lib unembedded TrueType (${layout})`,
        await pdfLibDoc((doc) => {
          const font = doc.context.register(doc.context.obj({ Type: 'Font', Subtype: 'TrueType', BaseFont: 'Arial' }));
          doc.addPage().node.setFontDictionary(PDFName.of('F1'), font);
        }, useObjectStreams),
      ],
    );
  }
  return list;
}

describe('the strict fast reader agrees with the full (pdf-lib) inspection (F8)', async () => {
  const pdfs = await corpus();

  it.each(pdfs)('gives the same verdict on %s', async (_label, pdf) => {
    expect(await verdict(pdf, false)).toEqual(await verdict(pdf, true));
  });

  it.each(pdfs)('never accepts what the full inspection rejects, nor with other warnings: %s', async (_label, pdf) => {
    const quick = quickInspect(pdf);
    if (quick === undefined) return;
    expect(await verdict(pdf, true)).toEqual({ warnings: quick });
  });

  it.each(pdfs)('answers the same with an inflater of the host: %s', async (_label, pdf) => {
    const inflate = (data: Uint8Array, maxOutputLength: number) =>
      Promise.resolve(inflateSync(data, { maxOutputLength }));
    expect(await quickInspectWith(pdf, inflate)).toEqual(quickInspect(pdf));
  });

  it('settles render() output and plain pdf-lib files itself', async () => {
    for (const label of [
      'blank',
      'a name inside stream data',
      'long keys, clean',
      'a page tree of two levels',
      'render()',
      'render() of 120 items',
      'pdf-lib empty (object streams)',
    ]) {
      expect(quickInspect(pdfs.find(([l]) => l === label)![1]), label).toEqual([]);
    }
    expect(quickInspect(pdfs.find(([l]) => l === 'pdf-lib Helvetica (object streams)')![1])).toEqual([
      'visual.pdf: standard font Helvetica is not embedded',
    ]);
  });

  it.each(['object streams', 'xref table'])(
    'settles URI actions and embedded files itself, compressed in object streams too (%s)',
    (layout) => {
      expect(
        quickInspect(pdfs.find(([l]) => l === `pdf-lib URI actions and an embedded file (${layout})`)![1]),
      ).toEqual([
        'PDF_OPEN_ACTION_URI: visual.pdf contacts https://tracker.example as soon as it is opened',
        'PDF_AUTO_ACTION_URI: visual.pdf contacts https://tracker.example without a click (additional action /O)',
        'PDF_EMBEDDED_FILE: visual.pdf embeds the file "factur-x.xml" (4 bytes)',
      ]);
    },
  );

  it('decodes the strings of actions and file names as the full inspection does', () => {
    const quick = (label: string) => quickInspect(pdfs.find(([l]) => l === label)![1]);
    expect(quick('/OpenAction /URI, escaped string')).toEqual([
      'PDF_OPEN_ACTION_URI: visual.pdf contacts http://a.example as soon as it is opened',
    ]);
    expect(quick('/OpenAction /URI, hex string')).toEqual([
      'PDF_OPEN_ACTION_URI: visual.pdf contacts https://b.example as soon as it is opened',
    ]);
    expect(quick('/AA of the catalog, two triggers')).toEqual([
      'PDF_AUTO_ACTION_URI: visual.pdf contacts an address that is not a URL ("x") without a click (additional action /DP)',
      'PDF_AUTO_ACTION_URI: visual.pdf contacts https://c.example without a click (additional action /WC)',
    ]);
    expect(quick('/OpenAction /URI, a mailto address')).toEqual([
      'PDF_OPEN_ACTION_URI: visual.pdf contacts a mailto: address as soon as it is opened',
    ]);
    expect(quick('/Next loop')).toEqual([
      'PDF_OPEN_ACTION_URI: visual.pdf contacts https://loop.example as soon as it is opened',
    ]);
    expect(quick('embedded file with an escaped name')).toEqual([
      'PDF_EMBEDDED_FILE: visual.pdf embeds the file "a(1).xml" (3 bytes)',
    ]);
    // A trailer is not an object of the document: its keys trigger nothing in a viewer.
    expect(quick('/AA in the trailer only')).toEqual([]);
  });

  it.each([
    'not a PDF',
    'unbalanced array',
    'stream with external data',
    'stream with a wrong /Length',
    'endstream inside stream data',
    'an object hidden in a stream',
    'an object hidden in a string',
    'an object hidden in a comment',
    'an object hidden in a stream, header split by a comment',
    'no pages',
    'no catalog',
    'a page tree that loops',
    'junk between objects',
    'duplicate object',
    '/FS /URL',
    'escaped names',
    'lower-case escape',
    'Encrypt',
    'long keys, JavaScript inside',
    'unembedded TrueType',
    'repeated key, other font last',
    'descriptor with wrong generation',
    'unembedded TrueType without /Type',
    'unembedded font with only a descriptor',
    'pdf-lib JavaScript OpenAction (object streams)',
    'pdf-lib /Launch in a nested dictionary (object streams)',
    'pdf-lib /FS /URL (object streams)',
    'pdf-lib unembedded TrueType (object streams)',
    'page /AA pointing at a missing object',
  ])('leaves %s to the full inspection', (label) => {
    expect(quickInspect(pdfs.find(([l]) => l === label)![1])).toBeUndefined();
  });
});
