import fc from 'fast-check';
import { buildZip } from './zip-builder.js';

/**
 * Ways a valid archive can be damaged, as fast-check arbitraries over the bytes of one archive: bit
 * flips, overwritten bytes, truncations, reordered, duplicated and renamed entries, and edited sizes,
 * offsets and counts in the ZIP headers. Each value is the mutation's name and the damaged bytes.
 */
export interface Mutation {
  kind: string;
  bytes: Buffer;
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;

function offsetsOf(buf: Buffer, signature: number): number[] {
  const found: number[] = [];
  for (let i = 0; i + 4 <= buf.length; i++) if (buf.readUInt32LE(i) === signature) found.push(i);
  return found;
}

/** Header fields (offset from the signature, width in bytes) that say where and how large things are. */
const FIELDS: Record<number, [number, 2 | 4][]> = {
  // method, crc, compressed size, size, name length, extra length
  [LOCAL]: [
    [8, 2],
    [14, 4],
    [18, 4],
    [22, 4],
    [26, 2],
    [28, 2],
  ],
  // method, crc, compressed size, size, name length, extra length, comment length, local header offset
  [CENTRAL]: [
    [10, 2],
    [16, 4],
    [20, 4],
    [24, 4],
    [28, 2],
    [30, 2],
    [32, 2],
    [42, 4],
  ],
  // entries on this disk, entries, directory size, directory offset, comment length
  [END]: [
    [8, 2],
    [10, 2],
    [12, 4],
    [16, 4],
    [20, 2],
  ],
};

export function mutationsOf(original: Buffer, entries: Map<string, Buffer>): fc.Arbitrary<Mutation> {
  const names = [...entries.keys()];
  const headers = [LOCAL, CENTRAL, END].flatMap((sig) => offsetsOf(original, sig).map((at) => ({ sig, at })));
  const copy = () => Buffer.from(original);

  const bitFlips = fc
    .array(fc.tuple(fc.nat({ max: original.length - 1 }), fc.nat({ max: 7 })), { minLength: 1, maxLength: 4 })
    .map((flips) => {
      const bytes = copy();
      for (const [at, bit] of flips) bytes[at] = bytes[at]! ^ (1 << bit);
      return { kind: 'bit flips', bytes };
    });
  const overwrite = fc
    .tuple(fc.nat({ max: original.length - 1 }), fc.uint8Array({ minLength: 1, maxLength: 16 }))
    .map(([at, data]) => {
      const bytes = copy();
      Buffer.from(data).copy(bytes, at);
      return { kind: 'overwritten bytes', bytes };
    });
  const truncate = fc
    .nat({ max: original.length - 1 })
    .map((length) => ({ kind: 'truncated', bytes: original.subarray(0, length) }));
  const headerEdit = fc
    .tuple(fc.constantFrom(...headers), fc.nat(), fc.oneof(fc.constant(0), fc.constant(0xffffffff), fc.nat()))
    .map(([{ sig, at }, pick, value]) => {
      const fields = FIELDS[sig]!;
      const [field, width] = fields[pick % fields.length]!;
      const bytes = copy();
      if (width === 2) bytes.writeUInt16LE(value & 0xffff, at + field);
      else bytes.writeUInt32LE(value >>> 0, at + field);
      return { kind: 'edited header field', bytes };
    });
  const rebuilt = (list: { name: string; data: Buffer }[], kind: string) => ({ kind, bytes: buildZip(list) });
  const reorder = fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }).map((order) =>
    rebuilt(
      order.map((name) => ({ name, data: entries.get(name)! })),
      'reordered entries',
    ),
  );
  const duplicate = fc
    .tuple(fc.constantFrom(...names), fc.boolean())
    .map(([name, same]) =>
      rebuilt(
        [
          ...names.map((n) => ({ name: n, data: entries.get(n)! })),
          { name, data: same ? entries.get(name)! : Buffer.from('{}') },
        ],
        'duplicated entry',
      ),
    );
  const rename = fc
    .tuple(
      fc.constantFrom(...names),
      fc.oneof(
        fc.constantFrom(
          'vendor/x.bin',
          'META.JSON',
          'data.json/',
          '../data.json',
          'a\\b',
          '/abs',
          'vendor/../data.json',
        ),
        fc.string({ minLength: 1, maxLength: 12 }),
      ),
    )
    .map(([from, to]) =>
      rebuilt(
        names.map((n) => ({ name: n === from ? to : n, data: entries.get(n)! })),
        'renamed entry',
      ),
    );
  return fc.oneof(bitFlips, overwrite, truncate, headerEdit, reorder, duplicate, rename);
}

/** fast-check's run count: FUZZ_RUNS (the `npm run fuzz` script sets more), else `fallback`. */
export function fuzzRuns(fallback = 5_000): number {
  const n = Number(process.env.FUZZ_RUNS);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
