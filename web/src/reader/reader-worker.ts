/// <reference lib="webworker" />
// The Buffer adapter first: the format core expects Node's Buffer as a global.
import { enableSimdSearch } from '../shims/buffer.js';
import { finishValidation, validateCore } from '../../../src/sdf/validate.js';
import { dropSpares, offerSpares } from '../shims/spare-memory.js';
import { inflateEntryNative, inflateZlibNative } from './native-inflate.js';
import type { Entry, ReadMessage, ReadRequest } from './protocol.js';

/**
 * The reader's validation worker: the format core itself (src/sdf), judging one file in this thread so
 * the page never freezes. The page owns the time budget: it ends this worker when the budget runs out.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
// This worker's policy allows compiling WebAssembly (see web-app.ts): the PDF checks' searches use SIMD.
enableSimdSearch();
const post = (message: ReadMessage, transfer: Transferable[] = []): void => scope.postMessage(message, transfer);

scope.onmessage = async (event: MessageEvent<ReadRequest>) => {
  try {
    const started = performance.now();
    const { bytes, trustedKeys = [], spare = [] } = event.data;
    offerSpares(spare);
    const archive = Buffer.from(bytes);
    let entries: Entry[] = [];
    const transfer: ArrayBuffer[] = [bytes];
    const outcome = await validateCore(archive, {
      inflateRaw: inflateEntryNative,
      inflatePdfStream: inflateZlibNative,
      onStage: (stage) => post({ type: 'stage', stage }),
      onEntries: (files, names) => {
        entries = names
          .filter((name) => files.has(name))
          .map((name): Entry => {
            const data = files.get(name)!;
            // Handed back without a copy: a stretch of the archive, or a buffer the entry starts (a spare may
            // be longer than the entry; no other entry is in it, since one buffer serves one output).
            if (data.buffer === bytes) return { name, offset: data.byteOffset, length: data.length };
            const owns = data.byteOffset === 0 && !transfer.includes(data.buffer as ArrayBuffer);
            if (owns) {
              transfer.push(data.buffer as ArrayBuffer);
              return { name, bytes: data.buffer as ArrayBuffer, length: data.length };
            }
            return { name, bytes: data.buffer.slice(data.byteOffset, data.byteOffset + data.length) as ArrayBuffer };
          });
      },
    });
    const result = await finishValidation(outcome, (kid) => {
      const jwk = trustedKeys.find((key) => key.kid === kid);
      return jwk ? { publicKey: jwk } : undefined;
    });
    dropSpares();
    // The check's span in a browser trace (bench/reader-threads.ts finds what else ran beside it).
    performance.measure('sdf-check', { start: started });
    performance.clearMeasures('sdf-check');
    post({ type: 'done', result, archive: bytes, entries, workerMs: performance.now() - started }, transfer);
  } catch (error) {
    dropSpares();
    post({ type: 'crash', message: error instanceof Error ? error.message : String(error) });
  }
};
