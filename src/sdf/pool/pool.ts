import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { SdfError, type SdfErrorCode } from '../errors.js';
import {
  CHECK_NAMES,
  failResult,
  finishValidation,
  type CheckName,
  type CoreOutcome,
  type ValidateOptions,
  type ValidationResult,
} from '../validate.js';
import type { WorkerTask } from './validate-worker.js';
import { transpiledWorkerUrl } from './ts-sources.js';

export interface ValidationPoolOptions {
  maxThreads?: number;
  /** Wall-clock budget per file; the worker running it is terminated when it runs out. */
  timeoutMs?: number;
  /** Heap budget per worker (V8 old generation). */
  maxOldGenerationSizeMb?: number;
}

export interface ValidationPool {
  validate(input: Buffer | string, options?: ValidateOptions): Promise<ValidationResult>;
  destroy(): Promise<void>;
}

/**
 * What a check that ran out of time becomes: the entry it was judging is rejected. Running out of
 * memory is always SDF_ERROR_ARCHIVE_TOO_LARGE: the contents exceed what this service accepts (F2).
 */
const TIMEOUT_CODES: Record<CheckName, { code: SdfErrorCode; file?: string }> = {
  container: { code: 'SDF_ERROR_ARCHIVE_TOO_LARGE' },
  meta: { code: 'SDF_ERROR_INVALID_META', file: 'meta.json' },
  schema: { code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' },
  // F6: a schema whose evaluation cannot finish within the budget (catastrophic regex) is a hostile schema.
  data: { code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' },
  pdf: { code: 'SDF_ERROR_UNSAFE_PDF', file: 'visual.pdf' },
  signature: { code: 'SDF_ERROR_INVALID_SIGNATURE', file: 'signature.sig' },
};

/**
 * Where the worker module is: next to this file when compiled. From TypeScript sources (the test
 * runner) Node 20 cannot load the .ts worker, so the sources are transpiled once to a temporary folder.
 */
function workerFilename(): string {
  const here = import.meta.url;
  return here.endsWith('.ts') ? transpiledWorkerUrl(here) : new URL('./validate-worker.js', here).href;
}

/** F6 and the safety budget: validation of untrusted bytes in a bounded pool with time and memory limits. */
export function createValidationPool(options: ValidationPoolOptions = {}): ValidationPool {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const memoryMb = options.maxOldGenerationSizeMb ?? 512;
  const pool = new Piscina({
    filename: workerFilename(),
    maxThreads: options.maxThreads ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
    minThreads: 0,
    idleTimeout: 30_000,
    resourceLimits: {
      maxOldGenerationSizeMb: memoryMb,
      // A bounded young generation as well: without it a worker can outgrow its limit while being torn
      // down, and V8 then aborts the whole process instead of only the worker.
      maxYoungGenerationSizeMb: 16,
    },
  });

  async function validate(input: Buffer | string, validateOptions: ValidateOptions = {}): Promise<ValidationResult> {
    const stage = new SharedArrayBuffer(4);
    const view = new Int32Array(stage);
    view[0] = NOT_STARTED;
    const task: WorkerTask = { input, limits: validateOptions.limits, stage };
    const budget = startBudgetWhenRunning(view, timeoutMs);
    let outcome: CoreOutcome;
    try {
      outcome = (await pool.run(task, { signal: budget.signal })) as CoreOutcome;
    } catch (error) {
      const exceeded = budgetExceeded(error);
      if (exceeded === undefined) throw error;
      return budgetResult(CHECK_NAMES[Atomics.load(view, 0)] ?? 'container', exceeded, timeoutMs, memoryMb);
    } finally {
      budget.release();
    }
    return finishValidation(outcome, validateOptions.keyLookup);
  }

  return { validate, destroy: () => pool.destroy() };
}

const NOT_STARTED = -1;

/**
 * The time budget counts from the moment a worker starts on the file (it stores the first check index
 * and notifies), so a file waiting in the queue, or a worker still starting, does not eat its budget.
 */
function startBudgetWhenRunning(view: Int32Array, timeoutMs: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const arm = (): void => {
    if (done || timer) return;
    timer = setTimeout(() => controller.abort(new Error('time budget exceeded')), timeoutMs);
  };
  const wait = Atomics.waitAsync(view, 0, NOT_STARTED);
  if (wait.async) void wait.value.then(arm);
  else arm();
  return {
    signal: controller.signal,
    release() {
      done = true;
      clearTimeout(timer);
      // Wake the waiter if the task ended before it ever started, so nothing is left pending.
      if (Atomics.compareExchange(view, 0, NOT_STARTED, 0) === NOT_STARTED) Atomics.notify(view, 0);
    },
  };
}

function budgetExceeded(error: unknown): 'time' | 'memory' | undefined {
  const { name, code } = error as { name?: string; code?: string };
  if (name === 'AbortError') return 'time';
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return 'memory';
  return undefined;
}

function budgetResult(
  stage: CheckName,
  exceeded: 'time' | 'memory',
  timeoutMs: number,
  memoryMb: number,
): ValidationResult {
  const checks = Object.fromEntries(CHECK_NAMES.map((c) => [c, 'skipped'])) as ValidationResult['checks'];
  for (const check of CHECK_NAMES.slice(0, CHECK_NAMES.indexOf(stage))) checks[check] = 'pass';
  const { code, file } =
    exceeded === 'time'
      ? TIMEOUT_CODES[stage]
      : { code: 'SDF_ERROR_ARCHIVE_TOO_LARGE' as const, file: TIMEOUT_CODES[stage].file };
  const reason =
    exceeded === 'time'
      ? `did not finish within the time budget of ${timeoutMs} ms`
      : `exceeded the memory budget of ${memoryMb} MB`;
  const message = `the ${stage} check ${reason}`;
  const result: ValidationResult = {
    valid: false,
    sdf_version: null,
    document_type: null,
    is_signed: false,
    checks,
    warnings: [],
  };
  return failResult(result, stage, new SdfError(code, message, file, [{ path: '', message }]));
}
