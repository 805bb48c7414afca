/**
 * Writes a classic (uncompressed, cross-reference table) PDF from object bodies; object 1 is the
 * catalog. Tests use it to say exactly which dictionaries a hostile PDF holds.
 */
export function buildPdf(objects: string[]): Buffer {
  let body = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A one-page PDF with no text and no fonts: the smallest visual layer that passes F8. */
export function blankPdf(extraCatalog = '', pageResources = '<< >>', extraObjects: string[] = []): Buffer {
  const content = '0 0 1 rg 72 720 200 20 re f';
  return buildPdf([
    `<< /Type /Catalog /Pages 2 0 R ${extraCatalog} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources ${pageResources} >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    ...extraObjects,
  ]);
}

/** Where `hiddenObjectPdf` writes its object: each is skipped by a reader that parses in order. */
export type HiddenPlace = 'stream' | 'string' | 'comment' | 'stream, header split by a comment';

/**
 * A PDF whose catalog opens with `5 0 R`, an object that exists only for a reader that follows the
 * cross-reference table: its header sits inside another object's stream data, a string or a comment,
 * and the table points there. The object is a JavaScript action.
 */
export function hiddenObjectPdf(place: HiddenPlace): Buffer {
  const action = '<< /S /JavaScript /JS (app.alert(1)) >>';
  const hidden =
    place === 'stream, header split by a comment' ? `5 0 %x\nobj\n${action}\nendobj` : `5 0 obj\n${action}\nendobj`;
  const content = place.startsWith('stream') ? `q Q\n${hidden}\n` : 'q Q';
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /OpenAction 5 0 R${place === 'string' ? ` /Lang (${hidden})` : ''} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
    if (index === 0 && place === 'comment') body += `% ${hidden.replace(/\n/g, ' ')}\n`;
  });
  offsets.push(body.indexOf('5 0 '));
  const xref = body.length;
  body += `xref\n0 6\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
