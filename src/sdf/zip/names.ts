import { SdfError } from '../errors.js';

export const REQUIRED_ENTRIES = ['visual.pdf', 'data.json', 'schema.json', 'meta.json'] as const;
export const SIGNATURE_ENTRY = 'signature.sig';
const ROOT_ENTRIES = new Set<string>([...REQUIRED_ENTRIES, SIGNATURE_ENTRY]);
const VENDOR_PREFIX = 'vendor/';

const invalid = (message: string, name: string): SdfError =>
  new SdfError('SDF_ERROR_INVALID_ARCHIVE', message, undefined, [{ path: `/${name}`, message }]);

/** F1 and SDF_FORMAT 11.4: what may appear in an archive, judged on the names alone. */
export function checkEntryNames(names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (name.length === 0) throw invalid('an entry has an empty name', name);
    if (name.includes('\\')) throw invalid(`entry name ${name} contains a backslash`, name);
    if (name.includes('\0')) throw invalid('an entry name contains a NUL character', name);
    if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw invalid(`entry name ${name} is absolute`, name);
    const segments = name.split('/');
    const isDirectory = name.endsWith('/');
    const parts = isDirectory ? segments.slice(0, -1) : segments;
    if (parts.some((s) => s === '..')) throw invalid(`entry name ${name} contains a .. segment`, name);
    if (parts.some((s) => s === '' || s === '.')) throw invalid(`entry name ${name} has an empty or . segment`, name);
    // Case-folded so that extraction on a case-insensitive file system cannot collide either.
    const key = name.normalize('NFC').toLowerCase();
    if (seen.has(key)) throw invalid(`entry ${name} appears more than once`, name);
    seen.add(key);
    if (isDirectory) {
      if (name !== VENDOR_PREFIX && !name.startsWith(VENDOR_PREFIX)) {
        throw invalid(`directory ${name} is not allowed; extra files belong under vendor/`, name);
      }
    } else if (parts.length === 1) {
      if (!ROOT_ENTRIES.has(name)) throw invalid(`root entry ${name} is not part of the SDF format`, name);
    } else if (!name.startsWith(VENDOR_PREFIX)) {
      throw invalid(`entry ${name} is outside vendor/`, name);
    }
  }
}
