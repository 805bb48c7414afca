import zlib from 'node:zlib';

let table: Uint32Array | undefined;

function slowCrc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** zlib.crc32 exists from Node 20.15; the table version covers older 20.x releases. */
export const crc32: (data: Uint8Array) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (data) => (zlib as unknown as { crc32: (d: Uint8Array) => number }).crc32(data)
    : slowCrc32;
