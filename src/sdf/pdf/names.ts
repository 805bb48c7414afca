import { SdfError } from '../errors.js';

/** A refusal of visual.pdf (F8, rules 2-3 and 11), with the reason as its message and only detail. */
export function unsafePdf(message: string, path = ''): SdfError {
  return new SdfError('SDF_ERROR_UNSAFE_PDF', message, 'visual.pdf', [{ path, message }]);
}

/** F8: names that mean executable content, forms that script, or a reach outside the file. */
export const FORBIDDEN_NAMES: ReadonlySet<string> = new Set([
  'JavaScript',
  'JS',
  'Launch',
  'ImportData',
  'SubmitForm',
  'GoToR',
  'GoToE',
  'XFA',
  'RichMedia',
]);

/** F8: the standard 14 fonts every viewer can render without the file embedding them. */
export const STANDARD_14_FONTS: ReadonlySet<string> = new Set([
  'Times-Roman',
  'Times-Bold',
  'Times-Italic',
  'Times-BoldItalic',
  'Helvetica',
  'Helvetica-Bold',
  'Helvetica-Oblique',
  'Helvetica-BoldOblique',
  'Courier',
  'Courier-Bold',
  'Courier-Oblique',
  'Courier-BoldOblique',
  'Symbol',
  'ZapfDingbats',
]);

/** Decodes `#xx` escapes in either case (PDF 1.7, 7.3.5), the form an attacker uses to hide `/JavaScript`. */
export function decodePdfName(raw: string): string {
  return raw.replace(/#([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
