import yazl from 'yazl';

/** Writes a plain ZIP any unzip tool opens (rule 11): Deflate, UTF-8 names, no ZIP64, no comment. */
export function writeZip(files: [string, Buffer][], mtime: Date = new Date()): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, bytes] of files) zip.addBuffer(bytes, name, { mtime, mode: 0o100644, compress: true });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}
