/** F2: archive limits, counted on bytes actually inflated. All are configuration with these defaults. */
export interface Limits {
  /** Largest inflated size of one entry, in bytes. */
  maxEntryBytes: number;
  /** Largest inflated size of all entries together, in bytes. */
  maxTotalBytes: number;
  /** Largest number of entries in the central directory. */
  maxEntries: number;
  /** Deepest nesting of arrays and objects in data.json and schema.json. */
  maxJsonDepth: number;
  /**
   * Most values (objects, arrays, scalars) in one JSON entry. A few bytes of JSON can parse into an
   * object of a hundred bytes on the heap; this refuses the obvious memory bombs before parsing.
   */
  maxJsonValues: number;
  /**
   * Largest inflated size of meta.json. It is read on the API at upload (S2) and kept in the record, so
   * it is bounded far below the other entries: identity and provenance fit in a few hundred bytes.
   */
  maxMetaBytes: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxEntryBytes: 50 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
  maxEntries: 1000,
  maxJsonDepth: 256,
  maxJsonValues: 1_000_000,
  maxMetaBytes: 64 * 1024,
});

export function resolveLimits(overrides?: Partial<Limits>): Limits {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`limit ${key} must be a positive integer`);
  }
  return limits;
}
