import type { CheckName, ValidationResult } from '../../../src/sdf/result.js';

/** A public key of a JWKS, as the page fetched it. */
export interface Jwk {
  kid?: string;
  kty?: string;
  [member: string]: unknown;
}

/** Page -> validation worker: one file, read and judged once; the worker ends after answering. */
export interface ReadRequest {
  bytes: ArrayBuffer;
  /** Keys the signature is checked against for `trusted` (F9), from the JWKS the user named. */
  trustedKeys?: Jwk[];
}

/** An entry's bytes: its own buffer, or a stretch of the archive's (a stored entry is not copied). */
export type Entry = { name: string; bytes: ArrayBuffer } | { name: string; offset: number; length: number };

/** Validation worker -> page. */
export type ReadMessage =
  | { type: 'stage'; stage: CheckName }
  | { type: 'done'; result: ValidationResult; archive: ArrayBuffer; entries: Entry[]; workerMs: number }
  | { type: 'crash'; message: string };
