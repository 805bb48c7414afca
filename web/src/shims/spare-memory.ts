/**
 * Memory handed back for reuse, for the large outputs of inflating an archive's entries in the reader's
 * worker. A fresh buffer of many megabytes costs the browser a page fault for every 4 KB on first touch
 * (a new 19 MB buffer filled from another took 10 to 13 ms in Chromium's worker here, the same copy into a
 * buffer already used 1 to 4 ms), where Node's allocator hands the last file's freed memory to the next.
 * The reader page gives the worker the previous file's buffers once it no longer shows them, and the
 * worker fills them instead of new ones.
 *
 * Like `Buffer.allocUnsafe`, what a buffer from here holds beyond what is written into it is unspecified
 * (here: the previous file's bytes, of the same page); every caller writes before it reads and hands on
 * only the part it wrote.
 */

/** Below this a new buffer is cheap: the spares are for entries of megabytes. */
export const SPARE_MIN_BYTES = 1024 * 1024;

let spares: ArrayBuffer[] = [];

/** Offers buffers for the next allocations (replacing any offered before); ones too small are left out. */
export function offerSpares(buffers: readonly ArrayBuffer[]): void {
  spares = buffers.filter((buffer) => buffer.byteLength >= SPARE_MIN_BYTES);
}

/** Forgets the spares not taken (their memory goes back to the browser). */
export function dropSpares(): void {
  spares = [];
}

/**
 * `size` bytes, contents unspecified: a view at the start of the smallest spare that holds them and is at
 * most twice their size (taken: no other allocation gets it; the rest of it goes along with the entry, so a
 * small entry does not keep a large buffer alive), or a new Buffer.
 */
export function allocOutput(size: number): Buffer {
  if (size >= SPARE_MIN_BYTES) {
    let best = -1;
    for (let i = 0; i < spares.length; i++) {
      const length = spares[i]!.byteLength;
      if (length >= size && length <= 2 * size && (best < 0 || length < spares[best]!.byteLength)) best = i;
    }
    if (best >= 0) {
      const [spare] = spares.splice(best, 1);
      return Buffer.from(spare!, 0, size);
    }
  }
  return Buffer.allocUnsafe(size);
}
