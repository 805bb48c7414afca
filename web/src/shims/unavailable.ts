/**
 * `node:fs` and `node:util` for the browser: the format core reads files from paths only on the
 * server; in the browser every archive arrives as bytes, so none of these is ever called.
 */
function unavailable(): never {
  throw new Error('not available in the browser');
}

export const openSync = unavailable;
export const closeSync = unavailable;
export const fstatSync = unavailable;
export const readSync = unavailable;
export const read = unavailable;
export const close = unavailable;
export const promisify = (): typeof unavailable => unavailable;
export default { openSync, closeSync, fstatSync, readSync, read, close, promisify };
