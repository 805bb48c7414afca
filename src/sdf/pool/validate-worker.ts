import { SdfError, type SdfErrorCode, type SdfErrorDetail } from '../errors.js';
import { systemErrorCode, writeNewFile, type SystemErrorCode } from '../output-file.js';
import type { PackInput } from '../producer/pack.js';
import { resolveLimits, type Limits } from '../limits.js';
import { parseMeta } from '../rules/meta.js';
import type { RegisteredSummaryMapping } from '../summary.js';
import { checkIntegrity, type IntegrityOutcome } from '../signature/verify.js';
import { validateCore, CHECK_NAMES, type CoreOutcome } from '../validate.js';
import { openArchive, readEntries } from '../zip/archive.js';
import { markStage, markStart } from './stage-board.js';

/**
 * Pool to worker. `validate` (the default) runs the checks of F10. `verify` runs the integrity half of
 * F9 alone (POST /verify/:id). `data` reads data.json out of an archive (GET /data/:id): into a new file
 * at `output` when given, else its bytes come back. `produce` packs `produce` (data, schema and meta
 * fields) into an SDF file, rendering its PDF: into a new file at `output` when given, else its bytes
 * come back.
 */
export interface WorkerTask {
  id: number;
  kind?: 'validate' | 'verify' | 'data' | 'produce';
  input: Uint8Array | string;
  produce?: Pick<PackInput, 'data' | 'schema' | 'meta'>;
  limits?: Partial<Limits>;
  output?: string;
  /** A validation's registered summary mappings (plain data: they cross the channel). */
  summaryMappings?: RegisteredSummaryMapping[];
}

/** A produced file: its size, meta.json as written, and its bytes unless written to `output`. */
export interface ProducedFile {
  size: number;
  meta: Record<string, string>;
  archive?: Uint8Array;
}

/** An SdfError as it crosses from the worker (class instances do not survive the channel). */
export interface SdfErrorShape {
  code: SdfErrorCode;
  message: string;
  file?: string;
  details: SdfErrorDetail[];
}

/**
 * Worker to pool: the outcome, one message per task. Answers carry the worker's pid, so a caller can tell
 * which process did the work. When the task started and which check runs are on the stage board.
 */
export type WorkerMessage =
  | { id: number; outcome: CoreOutcome; pid: number }
  | { id: number; integrity: IntegrityOutcome; pid: number }
  | { id: number; extracted: { size: number; data?: Uint8Array }; pid: number }
  | { id: number; produced: ProducedFile; pid: number }
  | { id: number; refused: SdfErrorShape; pid: number }
  | { id: number; error: string; sys?: SystemErrorCode };

const send = (message: WorkerMessage): void => {
  process.send!(message);
};

function toInput(input: Uint8Array | string): Buffer | string {
  return typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

/** F9 integrity on the whole archive; an unreadable or unsigned file is an answer, not an error. */
async function verify(task: WorkerTask): Promise<IntegrityOutcome> {
  markStage(CHECK_NAMES.indexOf('signature'));
  try {
    const limits = resolveLimits(task.limits);
    const opened = await openArchive(toInput(task.input), limits);
    const meta = parseMeta(opened.files.get('meta.json'), limits);
    return checkIntegrity(
      opened.files,
      opened.entries.map((e) => e.name),
      meta,
    );
  } catch (error) {
    if (!(error instanceof SdfError)) throw error;
    const result = { valid: false, algorithm: null, key_id: null, signed_at: null, trusted: false };
    return { result: { ...result, reason: error.message } };
  }
}

/**
 * data.json of an archive, inflated within the F2 limits. With `output` it is written to a new file
 * there (`writeNewFile`), so its bytes never cross to the service.
 */
async function extract(task: WorkerTask): Promise<{ size: number; data?: Uint8Array }> {
  markStage(CHECK_NAMES.indexOf('container'));
  const data = (await readEntries(toInput(task.input), [{ name: 'data.json' }], task.limits)).get('data.json');
  if (!data) throw new SdfError('SDF_ERROR_MISSING_FILE', 'the archive holds no data.json', 'data.json');
  if (task.output === undefined) return { size: data.length, data };
  writeNewFile(task.output, data);
  return { size: data.length };
}

/**
 * Rule 10: the producer, off the service's event loop and within the pool's budget. Its time counts
 * from here (the `data` stage: the data is being judged, then rendered); a refusal comes back as the
 * SdfError it is, so the service can answer with the schema's errors.
 */
async function produce(task: WorkerTask, pack: Producer): Promise<WorkerMessage> {
  markStage(CHECK_NAMES.indexOf('data'));
  try {
    const { archive, meta } = await pack({ ...task.produce!, limits: task.limits });
    if (task.output === undefined)
      return { id: task.id, produced: { size: archive.length, meta, archive }, pid: process.pid };
    writeNewFile(task.output, archive);
    return { id: task.id, produced: { size: archive.length, meta }, pid: process.pid };
  } catch (error) {
    if (!(error instanceof SdfError)) throw error;
    const { code, message, file, details } = error;
    return { id: task.id, refused: { code, message, file, details }, pid: process.pid };
  }
}

type Producer = typeof import('../producer/pack.js').pack;
let producer: Promise<Producer> | undefined;

/**
 * The producer (its PDF writer and fonts) is loaded by the first task that needs it: a process that
 * only validates starts sooner and holds less memory without it (docs/benchmarks.md, "Start-up").
 */
function loadProducer(): Promise<Producer> {
  producer ??= import('../producer/pack.js').then((m) => m.pack);
  return producer;
}

/** Runs in a pool process: the untrusted bytes never touch the service's heap or event loop. */
async function run(task: WorkerTask): Promise<WorkerMessage> {
  try {
    // Loading the producer is the service's own work, not the task's: it happens before the budget starts.
    const pack = task.kind === 'produce' ? await loadProducer() : undefined;
    // The time budget counts from here, not from the time the task waited for this process.
    markStart(task.id, -1);
    if (pack) return await produce(task, pack);
    if (task.kind === 'verify') return { id: task.id, integrity: await verify(task), pid: process.pid };
    if (task.kind === 'data') return { id: task.id, extracted: await extract(task), pid: process.pid };
    const outcome = await validateCore(toInput(task.input), {
      limits: task.limits,
      summaryMappings: task.summaryMappings,
      onStage: (name) => markStage(CHECK_NAMES.indexOf(name)),
    });
    return { id: task.id, outcome, pid: process.pid };
  } catch (error) {
    return { id: task.id, error: error instanceof Error ? error.message : String(error), sys: systemErrorCode(error) };
  }
}

process.on('message', (task: WorkerTask) => {
  void run(task).then(send);
});
// The pool going away closes the channel; nothing is left to do.
process.on('disconnect', () => process.exit(0));
