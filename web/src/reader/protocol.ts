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

export interface Entry {
  name: string;
  bytes: ArrayBuffer;
}

/** Validation worker -> page. */
export type ReadMessage =
  | { type: 'stage'; stage: CheckName }
  | { type: 'done'; result: ValidationResult; entries: Entry[]; workerMs: number }
  | { type: 'crash'; message: string };
