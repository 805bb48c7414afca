import { SdfError } from '../errors.js';

/** F7: the newest format version this implementation understands. */
export const SUPPORTED_SDF_VERSION = '0.1';
export const SDF_VERSION_PATTERN = /^\d+\.\d+$/;

/**
 * F7 and SDF_FORMAT 9.3: a higher MAJOR is rejected; the same MAJOR with a higher MINOR is read
 * with a warning. Returns the warnings to add to the result.
 */
export function checkVersion(version: string): string[] {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  const [supportedMajor, supportedMinor] = SUPPORTED_SDF_VERSION.split('.').map(Number) as [number, number];
  if (major > supportedMajor) {
    const message = `sdf_version ${version} is not supported; this implementation reads up to ${SUPPORTED_SDF_VERSION}`;
    throw new SdfError('SDF_ERROR_UNSUPPORTED_VERSION', message, 'meta.json', [{ path: '/sdf_version', message }]);
  }
  if (major === supportedMajor && minor > supportedMinor) {
    return [
      `meta.json: sdf_version ${version} is newer than the supported ${SUPPORTED_SDF_VERSION}; read as ${SUPPORTED_SDF_VERSION}`,
    ];
  }
  return [];
}
