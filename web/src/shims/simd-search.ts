/**
 * A search for a byte sequence through long stretches of bytes, in WebAssembly SIMD, for the browser's
 * Buffer#indexOf. Node looks for bytes with memchr; the browser's `Uint8Array#indexOf` reads one byte a
 * step (about 1 GB/s), and over a 19 MB scan the PDF checks' searches for `endstream` and `obj` cost
 * 15 to 50 ms each in the reader against 2 ms in Node. Sixteen bytes a step, this takes 2 to 4 ms.
 *
 * The haystack is copied into the module's memory a slice at a time (64 KB, which stays in the cache
 * while it is searched), slices overlapping by the needle's length less one so no occurrence is cut.
 * In each slice the module finds the candidates: positions whose byte is the needle's first and whose
 * byte a needle's length further on is its last (sixteen positions compared at once); the rest of the
 * needle is compared here. On bytes without structure one position in 65,536 is a candidate.
 *
 * The module is assembled below from its instructions, the text format in the comments beside them:
 *
 *   (module
 *     (import "env" "memory" (memory 1))
 *     ;; The first q in [p, end - span) with mem[q] = first and mem[q + span] = last, else -1.
 *     (func (export "candidate") (param $p i32) (param $end i32) (param $first i32) (param $last i32)
 *           (param $span i32) (result i32) (local $vf v128) (local $vl v128) (local $mask i32)
 *       (local.set $vf (i8x16.splat (local.get $first)))
 *       (local.set $vl (i8x16.splat (local.get $last)))
 *       (block $bytes (loop $vectors            ;; sixteen positions a step while they fit
 *         (br_if $bytes (i32.gt_u (i32.add (i32.add (local.get $p) (local.get $span)) (i32.const 16))
 *                                 (local.get $end)))
 *         (if (local.tee $mask (i8x16.bitmask (v128.and
 *               (i8x16.eq (v128.load (local.get $p)) (local.get $vf))
 *               (i8x16.eq (v128.load (i32.add (local.get $p) (local.get $span))) (local.get $vl)))))
 *           (then (return (i32.add (local.get $p) (i32.ctz (local.get $mask))))))
 *         (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *         (br $vectors)))
 *       (block $done (loop $byte                ;; then one at a time
 *         (br_if $done (i32.ge_u (i32.add (local.get $p) (local.get $span)) (local.get $end)))
 *         (if (i32.and (i32.eq (i32.load8_u (local.get $p)) (local.get $first))
 *                      (i32.eq (i32.load8_u (i32.add (local.get $p) (local.get $span))) (local.get $last)))
 *           (then (return (local.get $p))))
 *         (local.set $p (i32.add (local.get $p) (i32.const 1)))
 *         (br $byte)))
 *       (i32.const -1)))
 */

/** Bytes a slice: one page of the module's memory. */
const SLICE = 65536;

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    const low = n & 0x7f;
    n >>>= 7;
    out.push(n ? low | 0x80 : low);
  } while (n);
  return out;
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (text: string): number[] => vec([...text].map((c) => [c.charCodeAt(0)]));

// Types, and the instructions used (WebAssembly core 2.0, with the fixed-width SIMD proposal's).
const I32 = 0x7f;
const V128 = 0x7b;
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const END = 0x0b;
const VOID = 0x40;
const br = (depth: number): number[] => [0x0c, depth];
const brIf = (depth: number): number[] => [0x0d, depth];
const RETURN = 0x0f;
const get = (local: number): number[] => [0x20, local];
const set = (local: number): number[] => [0x21, local];
const tee = (local: number): number[] => [0x22, local];
/** `i32.const` of a small value (signed LEB128 of one byte: -64 to 63). */
const i32Const = (n: number): number[] => [0x41, n & 0x7f];
const LOAD8_U = [0x2d, 0, 0];
const I32_EQ = 0x46;
const I32_GT_U = 0x4b;
const I32_GE_U = 0x4f;
const I32_CTZ = 0x68;
const I32_ADD = 0x6a;
const I32_AND = 0x71;
const simd = (op: number): number[] => [0xfd, ...uleb(op)];
const V128_LOAD = [...simd(0x00), 0, 0];
const I8X16_SPLAT = simd(0x0f);
const I8X16_EQ = simd(0x23);
const V128_AND = simd(0x4e);
const I8X16_BITMASK = simd(0x64);

const [P, END_AT, FIRST, LAST, SPAN, VF, VL, MASK] = [0, 1, 2, 3, 4, 5, 6, 7];

/** The function's code, a line per line of the text format above. */
const body = [
  vec([
    [2, V128],
    [1, I32],
  ]),
  [...get(FIRST), ...I8X16_SPLAT, ...set(VF)],
  [...get(LAST), ...I8X16_SPLAT, ...set(VL)],
  [BLOCK, VOID, LOOP, VOID],
  [...get(P), ...get(SPAN), I32_ADD, ...i32Const(16), I32_ADD, ...get(END_AT), I32_GT_U, ...brIf(1)],
  [...get(P), ...V128_LOAD, ...get(VF), ...I8X16_EQ],
  [...get(P), ...get(SPAN), I32_ADD, ...V128_LOAD, ...get(VL), ...I8X16_EQ],
  [...V128_AND, ...I8X16_BITMASK, ...tee(MASK), IF, VOID],
  [...get(P), ...get(MASK), I32_CTZ, I32_ADD, RETURN, END],
  [...get(P), ...i32Const(16), I32_ADD, ...set(P)],
  [...br(0), END, END],
  [BLOCK, VOID, LOOP, VOID],
  [...get(P), ...get(SPAN), I32_ADD, ...get(END_AT), I32_GE_U, ...brIf(1)],
  [...get(P), ...LOAD8_U, ...get(FIRST), I32_EQ],
  [...get(P), ...get(SPAN), I32_ADD, ...LOAD8_U, ...get(LAST), I32_EQ, I32_AND, IF, VOID],
  [...get(P), RETURN, END],
  [...get(P), ...i32Const(1), I32_ADD, ...set(P)],
  [...br(0), END, END],
  [...i32Const(-1), END],
].flat();

const MODULE = new Uint8Array([
  // "\0asm", version 1
  ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
  // type 0: (i32 i32 i32 i32 i32) -> i32
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([[I32]])]])),
  // import env.memory: a memory of at least one page
  ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
  // function 0 of type 0, exported as "candidate"
  ...section(3, vec([[0]])),
  ...section(7, vec([[...name('candidate'), 0x00, 0]])),
  ...section(10, vec([[...uleb(body.length), ...body]])),
]);

/** The first index at or after `from` where `needle` (two bytes or more) occurs in `haystack`, else -1. */
export type Search = (haystack: Uint8Array, needle: Uint8Array, from: number) => number;

/**
 * The search, or null where WebAssembly or its SIMD instructions are unavailable or a page's policy
 * refuses to compile it (the caller then keeps its own search).
 */
export function simdSearch(): Search | null {
  let candidate: (p: number, end: number, first: number, last: number, span: number) => number;
  let memory: Uint8Array;
  try {
    if (typeof WebAssembly === 'undefined' || !WebAssembly.validate(MODULE)) return null;
    const wasmMemory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { env: { memory: wasmMemory } });
    candidate = instance.exports.candidate as typeof candidate;
    memory = new Uint8Array(wasmMemory.buffer);
  } catch {
    return null;
  }
  return (haystack, needle, from) => {
    // A plain view: `subarray` of the Buffer adapter's Buffer goes through its constructor.
    const bytes = new Uint8Array(haystack.buffer, haystack.byteOffset, haystack.length);
    const span = needle.length - 1;
    const first = needle[0]!;
    const last = needle[span]!;
    for (let base = Math.max(0, from); base + span < bytes.length; base += SLICE - span) {
      const length = Math.min(SLICE, bytes.length - base);
      memory.set(bytes.subarray(base, base + length), 0);
      for (let p = 0; ;) {
        const q = candidate(p, length, first, last, span);
        if (q < 0) break;
        let k = 1;
        while (k < span && memory[q + k] === needle[k]) k++;
        if (k >= span) return base + q;
        p = q + 1;
      }
      if (base + length === bytes.length) break;
    }
    return -1;
  };
}
