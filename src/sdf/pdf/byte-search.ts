/**
 * Buffer#indexOf looks for a needle of eight bytes or more by Boyer-Moore-Horspool, which on bytes with
 * few repeats (compressed streams, scanned images) runs about five times slower than its search for a
 * shorter needle, a memchr-driven scan: 7 against 1.3 ms over 19 MB of random bytes. Half of a scanned
 * page's validation was this search for `endstream` through the image data.
 *
 * So a long needle is looked for by its first seven bytes, and each hit is checked for the rest. Bytes
 * built to hold many such near misses (each a call back into the search) are left, after a few, to
 * Buffer#indexOf for the remainder, so they cost no more than before.
 */
const HEAD = 7;
const NEAR_MISSES = 32;

/** A search for `needle`: the first index at or after `from` where it occurs in `haystack`, else -1. */
export function byteSearch(needle: Uint8Array): (haystack: Buffer, from: number) => number {
  const whole = Buffer.from(needle);
  if (whole.length <= HEAD) return (haystack, from) => haystack.indexOf(whole, from);
  const head = whole.subarray(0, HEAD);
  return (haystack, from) => {
    let misses = 0;
    for (let p = haystack.indexOf(head, from); p >= 0; p = haystack.indexOf(head, p + 1)) {
      if (p + whole.length > haystack.length) return -1;
      let i = HEAD;
      while (i < whole.length && haystack[p + i] === whole[i]) i++;
      if (i === whole.length) return p;
      if (++misses === NEAR_MISSES) return haystack.indexOf(whole, p + 1);
    }
    return -1;
  };
}
