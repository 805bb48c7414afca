/// <reference lib="webworker" />
// The Buffer adapter first: the format core expects Node's Buffer as a global.
import '../shims/buffer.js';
import { finishValidation, validateCore } from '../../../src/sdf/validate.js';
import type { Entry, ReadMessage, ReadRequest } from './protocol.js';

/**
 * The reader's validation worker: the format core itself (src/sdf), judging one file in this thread so
 * the page never freezes. The page owns the time budget: it ends this worker when the budget runs out.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
const post = (message: ReadMessage, transfer: Transferable[] = []): void => scope.postMessage(message, transfer);

scope.onmessage = async (event: MessageEvent<ReadRequest>) => {
  try {
    const started = performance.now();
    const { bytes, trustedKeys = [] } = event.data;
    let entries: Entry[] = [];
    const outcome = await validateCore(Buffer.from(bytes), {
      onStage: (stage) => post({ type: 'stage', stage }),
      onEntries: (files, names) => {
        entries = names
          .filter((name) => files.has(name))
          .map((name) => {
            const data = files.get(name)!;
            return { name, bytes: data.buffer.slice(data.byteOffset, data.byteOffset + data.length) as ArrayBuffer };
          });
      },
    });
    const result = await finishValidation(outcome, (kid) => {
      const jwk = trustedKeys.find((key) => key.kid === kid);
      return jwk ? { publicKey: jwk } : undefined;
    });
    post(
      { type: 'done', result, entries, workerMs: performance.now() - started },
      entries.map((e) => e.bytes),
    );
  } catch (error) {
    post({ type: 'crash', message: error instanceof Error ? error.message : String(error) });
  }
};
