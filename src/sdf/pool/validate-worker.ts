import type { Limits } from '../limits.js';
import { validateCore, CHECK_NAMES, type CoreOutcome } from '../validate.js';

export interface WorkerTask {
  id: number;
  input: Uint8Array | string;
  limits?: Partial<Limits>;
}

/** Worker to pool: the check now running (the first one also starts the time budget), then the outcome. */
export type WorkerMessage =
  { id: number; stage: number } | { id: number; outcome: CoreOutcome } | { id: number; error: string };

const send = (message: WorkerMessage): void => {
  process.send!(message);
};

/** Runs in a pool process: the untrusted bytes never touch the service's heap or event loop. */
async function run(task: WorkerTask): Promise<WorkerMessage> {
  const input =
    typeof task.input === 'string'
      ? task.input
      : Buffer.from(task.input.buffer, task.input.byteOffset, task.input.byteLength);
  try {
    const outcome = await validateCore(input, {
      limits: task.limits,
      onStage: (name) => send({ id: task.id, stage: CHECK_NAMES.indexOf(name) }),
    });
    return { id: task.id, outcome };
  } catch (error) {
    return { id: task.id, error: error instanceof Error ? error.message : String(error) };
  }
}

process.on('message', (task: WorkerTask) => {
  void run(task).then(send);
});
// The pool going away closes the channel; nothing is left to do.
process.on('disconnect', () => process.exit(0));
