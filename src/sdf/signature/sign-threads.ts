import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SdfError } from '../errors.js';
import { transpiledWorkerUrl } from '../pool/ts-sources.js';
import type { SignOptions } from './sign.js';
import type { SignReply, SignTask } from './sign-thread.js';

/**
 * `signArchive()` on threads of this process, so a service signing many files keeps its event loop for
 * requests while the inflating, hashing and re-zipping run on another core. Unlike the validation pool
 * these are threads, not processes: they only ever see files already judged valid, and the private keys
 * stay in the process that holds them anyway (never in the processes that read hostile files).
 */
export interface SignThreads {
  /**
   * The signed archive's bytes. `archive` is the file's bytes or its path (read by the thread). The key
   * goes as `privateKeyPem`; each thread keeps the keys it parsed, so a key is parsed once per thread.
   */
  sign(archive: Buffer | string, options: ThreadSignOptions): Promise<Buffer>;
  /**
   * Signs into a new file at `output` (created exclusively, mode 0600, flushed to disk before it is
   * closed) and answers its size: neither the file nor the signed bytes pass through this thread.
   */
  signToFile(archive: Buffer | string, options: ThreadSignOptions, output: string): Promise<{ size: number }>;
  destroy(): Promise<void>;
}

export type ThreadSignOptions = Omit<SignOptions, 'privateKey'> & { privateKeyPem: string };

type Answer = Buffer | { size: number };

interface Task {
  message: SignTask;
  resolve(answer: Answer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  task: Task | null;
  failure?: Error;
}

function threadPath(): string {
  const here = import.meta.url;
  // From TypeScript sources (the test runner) the format core is transpiled once, threads included.
  return fileURLToPath(
    here.endsWith('.ts')
      ? new URL('../signature/sign-thread.js', transpiledWorkerUrl(here))
      : new URL('./sign-thread.js', here),
  );
}

function errorOf(reply: Extract<SignReply, { error: unknown }>['error']): Error {
  if (reply.code) return new SdfError(reply.code, reply.message, reply.file);
  // A file call's code travels with the message: the service tells a full disk by it.
  return Object.assign(new Error(reply.message), reply.sys ?? {});
}

/** At most `threads` threads (default: the cores but one, 1 to 4), started when first needed. */
export function createSignThreads(threads = Math.max(1, Math.min(4, availableParallelism() - 1))): SignThreads {
  const all = new Set<Thread>();
  const idle: Thread[] = [];
  const queue: Task[] = [];
  let destroyed = false;

  function start(): Thread {
    const thread: Thread = { worker: new Worker(threadPath()), task: null };
    thread.worker.on('message', (reply: SignReply) => {
      const task = thread.task;
      thread.task = null;
      if (task) {
        if ('error' in reply) task.reject(errorOf(reply.error));
        else if ('size' in reply) task.resolve({ size: reply.size });
        else task.resolve(Buffer.from(reply.signed.buffer, reply.signed.byteOffset, reply.signed.byteLength));
      }
      idle.push(thread);
      pump();
    });
    thread.worker.on('error', (err) => (thread.failure = err));
    thread.worker.on('exit', () => {
      all.delete(thread);
      const at = idle.indexOf(thread);
      if (at >= 0) idle.splice(at, 1);
      thread.task?.reject(thread.failure ?? new Error('the signing thread ended'));
      thread.task = null;
      pump();
    });
    all.add(thread);
    return thread;
  }

  function pump(): void {
    while (!destroyed && queue.length > 0) {
      const thread = idle.pop() ?? (all.size < threads ? start() : undefined);
      if (!thread) return;
      const task = queue.shift()!;
      thread.task = task;
      thread.worker.postMessage(task.message);
    }
  }

  function submit(message: SignTask): Promise<Answer> {
    if (destroyed) return Promise.reject(new Error('the signing threads are closed'));
    return new Promise<Answer>((resolve, reject) => {
      queue.push({ message, resolve, reject });
      pump();
    });
  }

  return {
    sign: (archive, options) => submit({ archive, options }) as Promise<Buffer>,
    signToFile: (archive, options, output) => submit({ archive, options, output }) as Promise<{ size: number }>,
    async destroy() {
      destroyed = true;
      for (const task of queue.splice(0)) task.reject(new Error('the signing threads are closed'));
      await Promise.all([...all].map((thread) => thread.worker.terminate()));
    },
  };
}
