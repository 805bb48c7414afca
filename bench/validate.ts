import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { pack, validate } from '../src/sdf/index.js';
import { INVOICE_SCHEMA } from '../src/sdf/testing/build-sdf.js';
import { invoiceWith, scannedPdf } from '../src/sdf/testing/corpus.js';

/**
 * Validation throughput and peak memory of validate() beside a bare baseline (inflate + JSON.parse + a
 * precompiled ajv validator) on the same files. Each side runs in its own process, so the RSS
 * high-water mark (process.resourceUsage().maxRSS) belongs to it alone, and the two take turns in
 * rounds, so the ratio holds on a machine whose speed varies.
 *
 *   npm run bench:validate
 */

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

type Method = 'validate' | 'baseline';
interface Measurement {
  files: number;
  seconds: number;
  maxRssMb: number;
}

/** Reads the central directory and inflates every entry: what any reader of the file must do. */
function inflateAll(zip: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let eocd = zip.length - 22;
  while (zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = zip.readUInt16LE(eocd + 10); n > 0; n--) {
    const method = zip.readUInt16LE(p + 10);
    const size = zip.readUInt32LE(p + 20);
    const nameLength = zip.readUInt16LE(p + 28);
    const name = zip.toString('utf8', p + 46, p + 46 + nameLength);
    const local = zip.readUInt32LE(p + 42);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + size);
    files.set(name, method === 8 ? inflateRawSync(raw) : raw);
    p += 46 + nameLength + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
  }
  return files;
}

/** One bench process: answers `run` requests with a measurement of `method` on `file`, until `stop`. */
async function serve(method: Method, file: string): Promise<void> {
  const bytes = readFileSync(file);
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const check = ajv.compile(INVOICE_SCHEMA); // precompiled once: the baseline's best case
  const once = async (): Promise<void> => {
    if (method === 'validate') {
      const result = await validate(bytes);
      if (!result.valid) throw new Error(`bench file is invalid: ${JSON.stringify(result.error)}`);
      return;
    }
    const files = inflateAll(bytes);
    JSON.parse(files.get('meta.json')!.toString('utf8'));
    JSON.parse(files.get('schema.json')!.toString('utf8'));
    if (!check(JSON.parse(files.get('data.json')!.toString('utf8')))) throw new Error('baseline: invalid');
  };
  await once(); // warm-up: module loading, compiled-schema cache
  process.on('message', (request: { run?: { minSeconds: number; minFiles: number }; stop?: true }) => {
    void (async () => {
      if (request.stop) {
        process.send!({ maxRssMb: process.resourceUsage().maxRSS / 1024 });
        process.disconnect();
        return;
      }
      const { minSeconds, minFiles } = request.run!;
      let files = 0;
      let seconds = 0;
      const start = process.hrtime.bigint();
      while (seconds < minSeconds || files < minFiles) {
        await once();
        files++;
        seconds = Number(process.hrtime.bigint() - start) / 1e9;
      }
      process.send!({ files, seconds });
    })();
  });
  process.send!({ ready: true });
}

/** A bench process for `method`, driven by requests; each keeps its own RSS high-water mark. */
class Phase {
  private readonly child: ChildProcess;
  private readonly replies: ((message: unknown) => void)[] = [];

  constructor(method: Method, file: string) {
    this.child = fork(process.argv[1]!, ['--phase', method, file], { execArgv: process.execArgv });
    this.child.on('message', (message) => this.replies.shift()?.(message));
    this.child.once('exit', (code) => {
      if (code !== 0) throw new Error(`bench phase ${method} exited ${code}`);
    });
  }

  private next<T>(): Promise<T> {
    return new Promise((resolve) => this.replies.push(resolve as (message: unknown) => void));
  }

  ready(): Promise<unknown> {
    return this.next();
  }

  run(minSeconds: number, minFiles: number): Promise<Measurement> {
    const reply = this.next<Measurement>();
    this.child.send({ run: { minSeconds, minFiles } });
    return reply;
  }

  async stop(): Promise<number> {
    const reply = this.next<{ maxRssMb: number }>();
    this.child.send({ stop: true });
    return (await reply).maxRssMb;
  }
}

interface Totals {
  rate: number;
  maxRssMb: number;
  /** Ratio of the baseline's rate to validate()'s in each round. */
  ratios: number[];
}

/**
 * Alternates rounds of validate() and of the baseline, each in its own process, so a slow spell of a
 * shared machine falls on both sides; the median of the per-round ratios is the figure to compare.
 */
async function compare(
  file: string,
  rounds: number,
  secondsPerRound: number,
  minFiles: number,
): Promise<[Totals, Totals]> {
  const sdf = new Phase('validate', file);
  const base = new Phase('baseline', file);
  await Promise.all([sdf.ready(), base.ready()]);
  const sum = { sdf: { files: 0, seconds: 0 }, base: { files: 0, seconds: 0 } };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const a = await sdf.run(secondsPerRound, minFiles);
    const b = await base.run(secondsPerRound, minFiles);
    sum.sdf.files += a.files;
    sum.sdf.seconds += a.seconds;
    sum.base.files += b.files;
    sum.base.seconds += b.seconds;
    ratios.push(b.files / b.seconds / (a.files / a.seconds));
  }
  ratios.sort((x, y) => x - y);
  return [
    { rate: sum.sdf.files / sum.sdf.seconds, maxRssMb: await sdf.stop(), ratios },
    { rate: sum.base.files / sum.base.seconds, maxRssMb: await base.stop(), ratios },
  ];
}

/** The q-quantile of sorted values (nearest rank). */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-bench-'));
  try {
    const meta = { document_type: 'invoice', issuer: 'Acme Supplies GmbH', issuer_id: 'DE123456789' };
    // label, line items, rounds, seconds per round and side, least files per round and side
    const sizes: [string, number, number, number, number][] = [
      ['small', 450, 40, 0.1, 10],
      ['typical', 1_850, 40, 0.1, 5],
      ['large data', 105_000, 5, 2, 2],
      ['large scan', 1_850, 5, 2, 2],
    ];
    const rows: string[] = [];
    for (const [label, items, rounds, secondsPerRound, minFiles] of sizes) {
      const data = invoiceWith(items);
      // The small and typical files carry their rendered PDF. The large-data file has a one-page PDF, so
      // the data dominates; the large-scan file (~20 MB) is the typical invoice as a scanned page.
      let pdf: Buffer | undefined;
      if (label === 'large data') {
        pdf = inflateAll((await pack({ data: invoiceWith(1), schema: INVOICE_SCHEMA, meta })).archive).get(
          'visual.pdf',
        );
      } else if (label === 'large scan') {
        pdf = await scannedPdf(2_560);
      }
      const { archive } = await pack({ data, schema: INVOICE_SCHEMA, meta, pdf });
      const file = join(dir, `${label}.sdf`);
      writeFileSync(file, archive);
      const entries = inflateAll(archive);
      const inflated = [...entries.values()].reduce((n, b) => n + b.length, 0);
      const [sdf, base] = await compare(file, rounds, secondsPerRound, minFiles);
      const { ratios } = sdf;
      const median = quantile(ratios, 0.5);
      rows.push(
        `${label}: archive ${(archive.length / 1024).toFixed(0)} KB, inflated ${(inflated / 1024).toFixed(0)} KB ` +
          `(data.json ${(entries.get('data.json')!.length / 1024).toFixed(0)} KB, ` +
          `visual.pdf ${(entries.get('visual.pdf')!.length / 1024).toFixed(0)} KB)`,
        `  validate()  ${sdf.rate.toFixed(1).padStart(8)} files/s   peak RSS ${sdf.maxRssMb.toFixed(0)} MB`,
        `  baseline    ${base.rate.toFixed(1).padStart(8)} files/s   peak RSS ${base.maxRssMb.toFixed(0)} MB`,
        `  ratio       ${median.toFixed(2).padStart(8)}x slower (median of ${rounds} alternating rounds; ` +
          `quartiles ${quantile(ratios, 0.25).toFixed(2)}-${quantile(ratios, 0.75).toFixed(2)}; ` +
          `overall ${(base.rate / sdf.rate).toFixed(2)})   ${(sdf.maxRssMb / base.maxRssMb).toFixed(2)}x memory`,
      );
    }
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--phase') {
  const [, , , method, file] = process.argv;
  await serve(method as Method, file!);
} else {
  await main();
}
