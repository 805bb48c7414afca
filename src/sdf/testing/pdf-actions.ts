import { PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib';

/** What `actionPdf` puts into its one-page PDF: each a reach outside the file that F8 lets through with a warning. */
export interface ActionPdfOptions {
  /** The catalog's `/OpenAction`: a URI action to this address. */
  openActionUri?: string;
  /** The page's `/AA /O` (page opened): a URI action to this address. */
  pageOpenUri?: string;
  /**
   * An attachment (an `/EmbeddedFiles` entry whose file specification has `/EF`). With a MIME type it
   * is pdf-lib's own attachment, whose `/Subtype` name escapes the slash (`/text#2Fxml`, as PDF/A-3
   * invoices write it); without one, the same structure with plain names only.
   */
  embeddedFile?: { name: string; bytes: Uint8Array; mimeType?: string };
  /** A `/URI` link annotation a person clicks: allowed without a warning. */
  linkUri?: string;
  /** Written with object streams (every dictionary compressed) or a classic cross-reference table. */
  useObjectStreams?: boolean;
}

/** A one-page PDF written by pdf-lib with the actions and attachment asked for. */
export async function actionPdf(options: ActionPdfOptions): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([595, 842]);
  const uriAction = (uri: string) => doc.context.obj({ S: 'URI', URI: PDFString.of(uri) });
  if (options.openActionUri !== undefined) {
    doc.catalog.set(PDFName.of('OpenAction'), doc.context.register(uriAction(options.openActionUri)));
  }
  if (options.pageOpenUri !== undefined) {
    page.node.set(PDFName.of('AA'), doc.context.obj({ O: doc.context.register(uriAction(options.pageOpenUri)) }));
  }
  if (options.linkUri !== undefined) {
    const link = doc.context.obj({
      Type: 'Annot',
      Subtype: 'Link',
      Rect: [50, 700, 250, 720],
      Border: [0, 0, 0],
      A: uriAction(options.linkUri),
    });
    page.node.set(PDFName.of('Annots'), doc.context.obj([doc.context.register(link)]));
  }
  const file = options.embeddedFile;
  if (file?.mimeType !== undefined) {
    await doc.attach(file.bytes, file.name, {
      mimeType: file.mimeType,
      description: 'Invoice data',
      creationDate: new Date('2026-03-15T13:30:00Z'),
      modificationDate: new Date('2026-03-15T13:30:00Z'),
    });
  } else if (file) {
    const stream = doc.context.flateStream(file.bytes, { Type: 'EmbeddedFile', Params: { Size: file.bytes.length } });
    const spec = doc.context.obj({
      Type: 'Filespec',
      F: PDFString.of(file.name),
      UF: PDFHexString.fromText(file.name),
      EF: { F: doc.context.register(stream) },
    });
    const names = doc.context.obj([PDFHexString.fromText(file.name), doc.context.register(spec)]);
    doc.catalog.set(PDFName.of('Names'), doc.context.obj({ EmbeddedFiles: { Names: names } }));
  }
  return Buffer.from(await doc.save({ useObjectStreams: options.useObjectStreams ?? true }));
}
