import type { CheckName, ValidationResult } from '../../../src/sdf/result.js';
import type { DataNode, Fact } from './data-prepare.js';

/** A public key of a JWKS, as the page fetched it. */
export interface Jwk {
  kid?: string;
  kty?: string;
  [member: string]: unknown;
}

/** Page -> validation worker: one file, read and judged once; the worker ends after answering. */
export interface ReadRequest {
  bytes: ArrayBuffer;
  /** The previous file's buffers, no longer shown: the worker inflates into them (web/src/shims/spare-memory.ts). */
  spare?: ArrayBuffer[];
  /** Keys the signature is checked against for `trusted` (F9), from the JWKS the user named. */
  trustedKeys?: Jwk[];
}

/**
 * An entry's bytes: the first `length` bytes of a buffer of its own (all of it without `length`), or a
 * stretch of the archive's (a stored entry is not copied).
 */
export type Entry =
  { name: string; bytes: ArrayBuffer; length?: number } | { name: string; offset: number; length: number };

/** Validation worker -> page. */
export type ReadMessage =
  | { type: 'stage'; stage: CheckName }
  | { type: 'done'; result: ValidationResult; archive: ArrayBuffer; entries: Entry[]; workerMs: number }
  | { type: 'crash'; message: string };

/** Page -> data worker: data.json to prepare once, then questions about it by path (see data-prepare.ts). */
export type DataRequest =
  | { type: 'open'; bytes: ArrayBuffer; meta: unknown }
  /** The data is let go: the worker waits for the next `open`. */
  | { type: 'close' }
  | { id: number; type: 'page'; path: number[]; offset: number; count: number }
  /** The first `end` characters of the string at `path`. */
  | { id: number; type: 'text'; path: number[]; end: number }
  /** The whole string at `path`, or the whole data as indented JSON (`path` null), as a Blob. */
  | { id: number; type: 'blob'; path: number[] | null }
  /** The first `limit` characters of the data as indented JSON, and its whole length. */
  | { id: number; type: 'json'; limit: number };

/** Data worker -> page. */
export type DataMessage =
  | { type: 'ready'; root: DataNode; summary: Fact[] }
  | { type: 'failed'; message: string }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string };
