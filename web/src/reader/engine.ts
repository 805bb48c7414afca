import { overBudget } from '../../../src/sdf/pool/budget.js';
import { SPARE_MIN_BYTES } from '../shims/spare-memory.js';
import type { CheckName, ValidationResult } from '../../../src/sdf/result.js';
import type { Entry, Jwk, ReadMessage, ReadRequest } from './protocol.js';

/** The same budget `sdf validate` and the service give one file (the pool's default). */
export const READ_BUDGET_MS = 10_000;

export interface ReadOutcome {
  result: ValidationResult;
  /**
   * The archive as the worker handed it back (stored entries are views into it); the caller's own bytes
   * when the worker did not answer and they were copied, empty when they were handed over.
   */
  bytes: Uint8Array;
  entries: Map<string, Uint8Array>;
  /** Milliseconds spent judging, reading the file from disk excluded. */
  elapsedMs: number;
  /** Of which inside the worker (the rest is handing the bytes over and back). */
  workerMs: number | null;
}

export type ReadProgress =
  { phase: 'loading'; loaded: number; total: number } | { phase: 'checking'; stage: CheckName };

/** Reads a picked file into memory, reporting progress as it goes (a 50 MB file takes a moment). */
export async function loadFile(file: Blob, onProgress?: (loaded: number, total: number) => void): Promise<Uint8Array> {
  const total = file.size;
  const bytes = new Uint8Array(total);
  const reader = file.stream().getReader();
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes.set(value.subarray(0, Math.max(0, total - loaded)), loaded);
    loaded += value.length;
    onProgress?.(Math.min(loaded, total), total);
  }
  return loaded === total ? bytes : bytes.subarray(0, Math.min(loaded, total));
}

/**
 * The large buffers an outcome holds (its archive, its inflated entries), for `recycle` once nothing
 * reads them any more.
 */
export function spareBuffers(outcome: ReadOutcome): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const view of [outcome.bytes, ...outcome.entries.values()]) {
    if (view.buffer instanceof ArrayBuffer && view.buffer.byteLength >= SPARE_MIN_BYTES) buffers.add(view.buffer);
  }
  return [...buffers];
}

/**
 * One worker waits between files, so its compiled code and schema cache serve the next one (as the
 * service's validation pool keeps its processes); a worker the budget ended is never reused.
 */
let idleWorker: Worker | null = null;

function takeWorker(): Worker {
  const worker = idleWorker ?? new Worker(new URL('./reader-worker.ts', import.meta.url), { type: 'module' });
  idleWorker = null;
  return worker;
}

function releaseWorker(worker: Worker): void {
  worker.onmessage = null;
  worker.onerror = null;
  if (idleWorker) worker.terminate();
  else idleWorker = worker;
}

/**
 * Judges one archive with the format core in a Web Worker. The bytes stay in this page: the worker is
 * a script of this origin and has no network. A file that outlasts the budget ends the worker and gets
 * the code the service gives it (the check it was in decides, F6 for a schema that hangs).
 */
export function readArchive(
  bytes: Uint8Array,
  options: {
    trustedKeys?: Jwk[];
    budgetMs?: number;
    onProgress?: (progress: ReadProgress) => void;
    /**
     * Move the caller's bytes into the worker instead of copying them (a 20 MB scan's copy is a good
     * share of its reading time): `bytes` is unusable afterwards, and the archive comes back as the
     * outcome's `bytes` unless the budget ended the worker. For a caller that can read the file again.
     */
    handOver?: boolean;
    /**
     * Buffers of an earlier outcome that nothing reads any more (`spareBuffers`): moved into the worker,
     * which inflates into them instead of new memory. Unusable here afterwards.
     */
    recycle?: readonly ArrayBuffer[];
  } = {},
): Promise<ReadOutcome> {
  const budgetMs = options.budgetMs ?? READ_BUDGET_MS;
  const worker = takeWorker();
  const started = performance.now();
  let stage: CheckName = 'container';
  return new Promise<ReadOutcome>((resolve) => {
    const finish = (
      result: ValidationResult,
      archive: Uint8Array,
      entries: Entry[] = [],
      workerMs: number | null = null,
    ): void => {
      clearTimeout(timer);
      if (workerMs !== null) releaseWorker(worker);
      else worker.terminate();
      resolve({
        result,
        bytes: archive,
        entries: new Map(
          entries.map((e) => [
            e.name,
            'bytes' in e
              ? new Uint8Array(e.bytes, 0, e.length ?? e.bytes.byteLength)
              : new Uint8Array(archive.buffer, e.offset, e.length),
          ]),
        ),
        elapsedMs: performance.now() - started,
        workerMs,
      });
    };
    // The worker gets a copy (moved, not cloned) and hands it back; the caller's own bytes stay usable,
    // also when the budget ends the worker and its copy with it. Handed over, they are moved themselves.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const handOver = options.handOver === true && whole && bytes.buffer instanceof ArrayBuffer;
    const kept = handOver ? new Uint8Array(0) : bytes;
    const timer = setTimeout(() => finish(overBudget(stage, 'time', budgetMs, 0), kept), budgetMs);
    worker.onmessage = (event: MessageEvent<ReadMessage>) => {
      const message = event.data;
      if (message.type === 'stage') {
        stage = message.stage;
        options.onProgress?.({ phase: 'checking', stage });
      } else if (message.type === 'done') {
        finish(message.result, new Uint8Array(message.archive), message.entries, message.workerMs);
      } else {
        finish(overBudget(stage, 'memory', budgetMs), kept);
      }
    };
    // A worker that dies (out of memory) has judged nothing: the contents are more than a browser tab holds.
    worker.onerror = (event) => {
      event.preventDefault();
      finish(overBudget(stage, 'memory', budgetMs), kept);
    };
    const copy = handOver ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
    const spare = [...new Set(options.recycle ?? [])].filter((b) => b !== copy && b.byteLength > 0);
    const request: ReadRequest = { bytes: copy, trustedKeys: options.trustedKeys, spare };
    worker.postMessage(request, [copy, ...spare]);
  });
}
