/** F2: archive limits, counted on bytes actually inflated. All are configuration with these defaults. */
export interface Limits {
  /** Largest inflated size of one entry, in bytes. */
  maxEntryBytes: number;
  /** Largest inflated size of all entries together, in bytes. */
  maxTotalBytes: number;
  /** Largest number of entries in the central directory. */
  maxEntries: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxEntryBytes: 50 * 1024 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
  maxEntries: 1000,
});

export function resolveLimits(overrides?: Partial<Limits>): Limits {
  const limits = { ...DEFAULT_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`limit ${key} must be a positive integer`);
  }
  return limits;
}
