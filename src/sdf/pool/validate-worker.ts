import { validateCore, CHECK_NAMES, type CoreOutcome } from '../validate.js';
import type { Limits } from '../limits.js';

export interface WorkerTask {
  input: Uint8Array | string;
  limits?: Partial<Limits>;
  /** One Int32 slot: the index of the check running now, read by the pool if the task is cut short. */
  stage: SharedArrayBuffer;
}

/** Runs in a pool thread: the untrusted bytes never touch the main thread's heap or event loop. */
export default async function run(task: WorkerTask): Promise<CoreOutcome> {
  const stage = new Int32Array(task.stage);
  const input =
    typeof task.input === 'string'
      ? task.input
      : Buffer.from(task.input.buffer, task.input.byteOffset, task.input.byteLength);
  return validateCore(input, {
    limits: task.limits,
    onStage: (name) => {
      Atomics.store(stage, 0, CHECK_NAMES.indexOf(name));
      Atomics.notify(stage, 0);
    },
  });
}
