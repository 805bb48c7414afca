import { AsyncResource } from 'node:async_hooks';
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
// Not validate.js: the checks run in the pool's processes, and this side loads only what it sends and reads.
import { finishValidation, type CoreOutcome } from '../finish.js';
import { CHECK_NAMES, type CheckName, type ValidationResult } from '../result.js';
import type { ValidateOptions } from '../validate.js';
import { applyTrust, type KeyLookup, type VerifyResult } from '../signature/verify.js';
import { SdfError } from '../errors.js';
import type { Limits } from '../limits.js';
import type { PackInput } from '../producer/pack.js';
import type { WorkerMessage, WorkerTask } from './validate-worker.js';
import { transpiledWorkerUrl } from './ts-sources.js';
import { overBudget } from './budget.js';
import { closeStageBoard, openStageBoard, readStage, STAGE_BOARD_FD, type StageMark } from './stage-board.js';

export interface ValidationPoolOptions {
  /** Most worker processes at once for background files; default: defaultPoolWorkers(). */
  maxWorkers?: number;
  /** Wall-clock budget per file, counted from the moment a worker starts on it. */
  timeoutMs?: number;
  /** Heap budget per worker (V8 old generation). */
  maxOldGenerationSizeMb?: number;
  /** A worker idle this long exits; the next file starts a fresh one. */
  idleTimeoutMs?: number;
  /**
   * Processes kept for the interactive lane beyond `maxWorkers`: background files never hold more than
   * `maxWorkers` processes, so an interactive file always finds one free or startable. Default 1.
   */
  interactiveWorkers?: number;
}

/** `interactive`: someone waits for the answer (POST /validate); `background`: a job does. */
export type PoolLane = 'interactive' | 'background';

export interface PoolTaskOptions extends ValidateOptions {
  /** Default `background`. Interactive files are served first and have a process of their own. */
  lane?: PoolLane;
  /** Files of one lane are taken in turn from each tenant with files waiting, so no tenant's backlog blocks another's. */
  tenant?: string;
}

/** Options of a pool validation: those of validate(), the lane and tenant. */
export type PoolValidateOptions = PoolTaskOptions;

/** Options of a pool verification (F9): the tenant's key lookup, limits, lane and tenant. */
export interface PoolVerifyOptions {
  keyLookup?: KeyLookup;
  limits?: Partial<Limits>;
  lane?: PoolLane;
  tenant?: string;
}

/** Options of reading data.json out of an archive: limits, lane, tenant, and the file to write it to. */
export interface PoolDataOptions {
  limits?: Partial<Limits>;
  lane?: PoolLane;
  tenant?: string;
  /** A path where no file exists yet: data.json is written there (flushed to disk) instead of returned. */
  output?: string;
}

/** data.json's size; its bytes too unless it was written to `output`. */
export interface PoolDataResult {
  size: number;
  data?: Buffer;
}

/** Options of producing a file: limits, lane, tenant, and the file to write it to. */
export interface PoolProduceOptions {
  limits?: Partial<Limits>;
  lane?: PoolLane;
  tenant?: string;
  /** A path where no file exists yet: the SDF file is written there (flushed to disk) instead of returned. */
  output?: string;
}

/** A produced SDF file: its size, meta.json as written, its bytes unless written to `output`. */
export interface PoolProduceResult {
  size: number;
  meta: Record<string, string>;
  archive?: Buffer;
}

/** F9 verification done in a worker; `pid` names the process that read the archive. */
export interface PoolVerifyResult {
  result: VerifyResult;
  pid: number;
}

export interface ValidationPool {
  validate(input: Buffer | string, options?: PoolValidateOptions): Promise<ValidationResult>;
  /** F9 verification of a whole archive, under the same time and memory budget as validation. */
  verify(input: Buffer | string, options?: PoolVerifyOptions): Promise<PoolVerifyResult>;
  /**
   * data.json of an archive, inflated within the F2 limits under the same budget as validation; the
   * archive is not judged (it was, when it was stored). A read that runs out of the budget rejects.
   */
  extractData(input: Buffer | string, options?: PoolDataOptions): Promise<PoolDataResult>;
  /**
   * Rule 10 in a worker: checks the data against the schema, renders the PDF and packs the file under
   * the same time and memory budget as validation. Rejects with the SdfError of data that is refused,
   * or a ProduceBudgetError when the budget runs out.
   */
  produce(input: Pick<PackInput, 'data' | 'schema' | 'meta'>, options?: PoolProduceOptions): Promise<PoolProduceResult>;
  destroy(): Promise<void>;
}

/** The worker threw on a file (not a format failure, not the budget): the file's content caused it. */
export class WorkerTaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerTaskError';
  }
}

/** data.json could not be read out of an archive within the pool's time or memory budget. */
export class DataBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataBudgetError';
  }
}

/** A file could not be produced within the pool's time or memory budget. */
export class ProduceBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProduceBudgetError';
  }
}

/**
 * Waiting files of one lane, in turns by tenant: the next file comes from the tenant that has waited
 * longest for a turn, and within a tenant in arrival order.
 */
class FairQueue<T> {
  private readonly byTenant = new Map<string, T[]>();

  get size(): number {
    return this.byTenant.size;
  }

  push(tenant: string, item: T): void {
    const waiting = this.byTenant.get(tenant);
    if (waiting) waiting.push(item);
    else this.byTenant.set(tenant, [item]);
  }

  shift(): T | undefined {
    const first = this.byTenant.entries().next();
    if (first.done) return undefined;
    const [tenant, waiting] = first.value;
    const item = waiting.shift();
    // The tenant goes to the back of the turn order (a Map iterates in insertion order).
    this.byTenant.delete(tenant);
    if (waiting.length > 0) this.byTenant.set(tenant, waiting);
    return item;
  }

  drain(): T[] {
    const all = [...this.byTenant.values()].flat();
    this.byTenant.clear();
    return all;
  }
}

/** What V8 prints when a heap outgrows --max-old-space-size; the process then aborts. */
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit/;
const STDERR_TAIL = 4096;

/**
 * Where the worker module is: next to this file when compiled. From TypeScript sources (the test
 * runner) Node 20 cannot load the .ts worker, so the sources are transpiled once to a temporary folder.
 */
function workerPath(): string {
  const here = import.meta.url;
  return fileURLToPath(here.endsWith('.ts') ? transpiledWorkerUrl(here) : new URL('./validate-worker.js', here));
}

interface Job {
  task: WorkerTask;
  lane: PoolLane;
  tenant: string;
  /** The caller's answer from the worker's reply. */
  answer(message: Exclude<WorkerMessage, { error: string }>): Promise<unknown>;
  /** The caller's answer when the file ran out of its budget during `stage`. */
  overBudget(stage: CheckName, exceeded: 'time' | 'memory'): unknown;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  child: ChildProcess;
  job?: Job;
  /** The process's stage board (stage-board.ts): which task it is on, since when, in which check; -1 once closed. */
  board: number;
  timer?: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
  stderr: string;
  exited: Promise<void>;
}

/**
 * One background process per core, so one busy tenant can use the whole machine: the job's own steps
 * (reading the record, settling it) are short and wait on the database, and the pool processes are
 * where the CPU goes. Bounded so that every process at its heap budget still fits in half the memory.
 */
export function defaultPoolWorkers(memoryMb = 512): number {
  const byMemory = Math.floor(totalmem() / 2 / (memoryMb * 1024 * 1024));
  return Math.max(1, Math.min(availableParallelism(), byMemory));
}

/**
 * The safety budget (F6; hostile files end as a clear failure and the service stays healthy): untrusted
 * bytes are validated in child processes, one file per process at a time, each with a time limit and a
 * V8 heap limit.
 *
 * Processes, not worker threads: a worker thread that reaches its heap limit can abort the whole
 * process (V8's out-of-memory handling is fatal when the limit is crossed during garbage collection),
 * and one that collects in circles near its limit can take minutes to honour terminate(). A child
 * process that runs out of heap dies alone, and SIGKILL ends a runaway one at once.
 */
export function createValidationPool(options: ValidationPoolOptions = {}): ValidationPool {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const memoryMb = options.maxOldGenerationSizeMb ?? 512;
  const maxProcesses = options.maxWorkers ?? defaultPoolWorkers(memoryMb);
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxTotal = maxProcesses + (options.interactiveWorkers ?? 1);
  const modulePath = workerPath();
  const slots = new Set<Slot>();
  const lanes: Record<PoolLane, FairQueue<Job>> = { interactive: new FairQueue(), background: new FairQueue() };
  let nextId = 1;
  let destroyed = false;

  function spawn(): Slot {
    const board = openStageBoard();
    const stdio: (number | 'ignore' | 'pipe' | 'ipc')[] = ['ignore', 'ignore', 'pipe', 'ipc'];
    stdio[STAGE_BOARD_FD] = board;
    let child: ChildProcess;
    try {
      child = fork(modulePath, [], {
        // A bounded young generation as well, so the heap limit is the whole budget.
        execArgv: [`--max-old-space-size=${memoryMb}`, '--max-semi-space-size=8'],
        serialization: 'advanced', // Buffers cross as bytes, not as JSON arrays
        stdio,
      });
    } catch (error) {
      closeStageBoard(board);
      throw error;
    }
    const slot: Slot = {
      child,
      board,
      stderr: '',
      exited: new Promise((resolve) => child.once('exit', () => resolve())),
    };
    child.stderr!.on('data', (chunk: Buffer) => {
      slot.stderr = (slot.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('message', (message: WorkerMessage) => onMessage(slot, message));
    // Always listened to: an 'error' event without a listener would be thrown in this process. 'exit'
    // may not follow it, so the board is closed here too.
    child.on('error', () => {
      retire(slot);
      closeBoard(slot);
    });
    void slot.exited.then(() => {
      if (slots.delete(slot)) {
        clearTimeout(slot.idle);
        if (OUT_OF_MEMORY.test(slot.stderr)) settle(slot, (job) => job.resolve(budgetResult(slot, job, 'memory')));
        else
          settle(slot, (job) => job.reject(new Error(`the validation worker exited unexpectedly: ${lastLine(slot)}`)));
        dispatch();
      } // else retired: its file was already answered
      closeBoard(slot);
    });
    slots.add(slot);
    return slot;
  }

  function onMessage(slot: Slot, message: WorkerMessage): void {
    const job = slot.job;
    if (!job || message.id !== job.task.id) return;
    if ('error' in message) {
      // A file call's code travels with the message (ENOSPC writing the output): the service tells a full disk by it.
      const error = Object.assign(
        new WorkerTaskError(`validation failed inside the worker: ${message.error}`),
        message.sys,
      );
      settle(slot, (j) => j.reject(error));
    } else {
      settle(slot, (j) => j.answer(message).then(j.resolve, j.reject));
    }
    slot.child.unref();
    slot.idle = setTimeout(() => retire(slot), idleTimeoutMs);
    slot.idle.unref();
    dispatch();
  }

  function closeBoard(slot: Slot): void {
    if (slot.board < 0) return;
    closeStageBoard(slot.board);
    slot.board = -1;
  }

  /** Hands the slot's job its answer exactly once. */
  function settle(slot: Slot, answer: (job: Job) => unknown): void {
    const job = slot.job;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    if (job) void answer(job);
  }

  /** The job's answer when it ran out of its budget in the check its board shows (`mark`, else read now). */
  function budgetResult(
    slot: Slot,
    job: Job,
    exceeded: 'time' | 'memory',
    mark: StageMark | undefined = readStage(slot.board, job.task.id),
  ): unknown {
    return job.overBudget(CHECK_NAMES[mark?.stage ?? -1] ?? 'container', exceeded);
  }

  /**
   * Ends the slot's file once it has run `timeoutMs` since the process started on it (so time spent in
   * the queue or starting the process does not eat the budget): checked `delay` from now, and again
   * until the process has started and its time is up.
   */
  function armBudget(slot: Slot, delay: number): void {
    slot.timer = setTimeout(() => {
      const job = slot.job;
      if (!job) return;
      const mark = readStage(slot.board, job.task.id);
      const left = mark ? mark.startedAt + timeoutMs - Date.now() : timeoutMs;
      if (left > 0) return armBudget(slot, left);
      settle(slot, (j) => j.resolve(budgetResult(slot, j, 'time', mark)));
      retire(slot);
    }, delay);
  }

  /** Takes a process out of service and kills it; SIGKILL cannot be delayed by a busy heap. */
  function retire(slot: Slot): void {
    if (!slots.delete(slot)) return;
    clearTimeout(slot.idle);
    settle(slot, (job) => job.reject(new Error('the validation worker failed')));
    slot.child.kill('SIGKILL');
    dispatch();
  }

  /** An idle process, or a new one while the lane may still have more. */
  function freeSlot(lane: PoolLane): Slot | undefined {
    if (lane === 'background' && [...slots].filter((s) => s.job?.lane === 'background').length >= maxProcesses) {
      return undefined;
    }
    return [...slots].find((s) => !s.job) ?? (slots.size < maxTotal ? spawn() : undefined);
  }

  function dispatch(): void {
    while (!destroyed) {
      const lane: PoolLane | undefined =
        lanes.interactive.size > 0 ? 'interactive' : lanes.background.size > 0 ? 'background' : undefined;
      if (!lane) return;
      // An interactive file that finds no process means none is free or startable for any file.
      const slot = freeSlot(lane);
      if (!slot) return;
      const job = lanes[lane].shift()!;
      clearTimeout(slot.idle);
      slot.job = job;
      // A busy worker keeps this process alive until the file is answered; an idle one does not.
      slot.child.ref();
      slot.child.send(job.task);
      armBudget(slot, timeoutMs);
    }
  }

  function enqueue<T>(job: Omit<Job, 'resolve' | 'reject'>): Promise<T> {
    if (destroyed) return Promise.reject(new Error('the validation pool is destroyed'));
    return new Promise<T>((resolve, reject) => {
      // The answer runs when the worker's message arrives, in the context of whoever first started that
      // worker; run in this scope, it runs in the caller's (whose tenant a key lookup must act for). One
      // resource per task: AsyncResource.bind would also build its deprecated accessors on every call.
      const scope = new AsyncResource('SdfPoolTask');
      const answer: Job['answer'] = (message) => scope.runInAsyncScope(job.answer, undefined, message);
      lanes[job.lane].push(job.tenant, { ...job, answer, resolve: resolve as (result: unknown) => void, reject });
      dispatch();
    });
  }

  function validate(input: Buffer | string, validateOptions: PoolValidateOptions = {}): Promise<ValidationResult> {
    return enqueue<ValidationResult>({
      task: { id: nextId++, input, limits: validateOptions.limits, summaryMappings: validateOptions.summaryMappings },
      lane: validateOptions.lane ?? 'background',
      tenant: validateOptions.tenant ?? '',
      answer: async (message) => {
        if (!('outcome' in message)) throw new Error('the validation worker answered another task');
        const outcome: CoreOutcome = message.outcome;
        return finishValidation(outcome, validateOptions.keyLookup);
      },
      overBudget: (stage, exceeded) => overBudget(stage, exceeded, timeoutMs, memoryMb),
    });
  }

  function verify(input: Buffer | string, verifyOptions: PoolVerifyOptions = {}): Promise<PoolVerifyResult> {
    return enqueue<PoolVerifyResult>({
      task: { id: nextId++, kind: 'verify', input, limits: verifyOptions.limits },
      // Someone waits for a verification (POST /verify/:id).
      lane: verifyOptions.lane ?? 'interactive',
      tenant: verifyOptions.tenant ?? '',
      answer: async (message) => {
        if (!('integrity' in message)) throw new Error('the validation worker answered another task');
        return { result: await applyTrust(message.integrity, verifyOptions.keyLookup), pid: message.pid };
      },
      // An archive that cannot be read within the budget cannot be shown to be intact (F9).
      overBudget: (_stage, exceeded) => ({
        result: {
          valid: false,
          algorithm: null,
          key_id: null,
          signed_at: null,
          trusted: false,
          reason:
            exceeded === 'time'
              ? `verification did not finish within the time budget of ${timeoutMs} ms`
              : `verification exceeded the memory budget of ${memoryMb} MB`,
        },
        pid: 0,
      }),
    });
  }

  function extractData(input: Buffer | string, dataOptions: PoolDataOptions = {}): Promise<PoolDataResult> {
    return enqueue<PoolDataResult | DataBudgetError>({
      task: { id: nextId++, kind: 'data', input, limits: dataOptions.limits, output: dataOptions.output },
      lane: dataOptions.lane ?? 'interactive',
      tenant: dataOptions.tenant ?? '',
      answer: async (message) => {
        if (!('extracted' in message)) throw new Error('the validation worker answered another task');
        const { size, data } = message.extracted;
        return { size, ...(data ? { data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) } : {}) };
      },
      // Rejected through the job: `overBudget`'s value resolves it, so the error is its value here and
      // the caller's wrapper turns it back into a rejection.
      overBudget: (_stage, exceeded) =>
        new DataBudgetError(
          exceeded === 'time'
            ? `reading data.json did not finish within the time budget of ${timeoutMs} ms`
            : `reading data.json exceeded the memory budget of ${memoryMb} MB`,
        ),
    }).then((outcome) => {
      if (outcome instanceof DataBudgetError) throw outcome;
      return outcome;
    });
  }

  function produce(
    input: Pick<PackInput, 'data' | 'schema' | 'meta'>,
    produceOptions: PoolProduceOptions = {},
  ): Promise<PoolProduceResult> {
    return enqueue<PoolProduceResult | ProduceBudgetError>({
      task: {
        id: nextId++,
        kind: 'produce',
        input: '',
        produce: input,
        limits: produceOptions.limits,
        output: produceOptions.output,
      },
      // Someone waits for the file (POST /sdf/produce).
      lane: produceOptions.lane ?? 'interactive',
      tenant: produceOptions.tenant ?? '',
      answer: async (message) => {
        if ('refused' in message) {
          const { code, message: text, file, details } = message.refused;
          throw new SdfError(code, text, file, details);
        }
        if (!('produced' in message)) throw new Error('the validation worker answered another task');
        const { size, meta, archive } = message.produced;
        return {
          size,
          meta,
          ...(archive ? { archive: Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength) } : {}),
        };
      },
      overBudget: (_stage, exceeded) =>
        new ProduceBudgetError(
          exceeded === 'time'
            ? `producing the file did not finish within the time budget of ${timeoutMs} ms`
            : `producing the file exceeded the memory budget of ${memoryMb} MB`,
        ),
    }).then((outcome) => {
      if (outcome instanceof ProduceBudgetError) throw outcome;
      return outcome;
    });
  }

  /** Kills every worker and resolves once they have exited; files in flight or queued are rejected. */
  async function destroy(): Promise<void> {
    destroyed = true;
    const error = new Error('the validation pool is destroyed');
    for (const job of [...lanes.interactive.drain(), ...lanes.background.drain()]) job.reject(error);
    const exits: Promise<void>[] = [];
    for (const slot of [...slots]) {
      settle(slot, (job) => job.reject(error));
      exits.push(slot.exited);
      // An idle worker is unreferenced; referenced again, its exit keeps this process waiting for it.
      slot.child.ref();
      retire(slot);
    }
    await Promise.all(exits);
  }

  return { validate, verify, extractData, produce, destroy };
}

function lastLine(slot: Slot): string {
  const lines = slot.stderr.trim().split('\n');
  return lines[lines.length - 1] || `exit code ${slot.child.exitCode ?? slot.child.signalCode}`;
}
