import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { pack, validate } from '../src/sdf/index.js';
import { INVOICE_SCHEMA, invoiceData } from '../src/sdf/testing/build-sdf.js';

/**
 * Validation throughput and peak memory of validate() beside a bare baseline (inflate + JSON.parse + a
 * precompiled ajv validator) on the same files. Each measurement runs in its own process, so the RSS
 * high-water mark (process.resourceUsage().maxRSS) belongs to that measurement alone.
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

/** An invoice with `items` line items; about 190 bytes of data.json per item. */
function invoiceWith(items: number): Record<string, unknown> {
  const data = invoiceData();
  data.line_items = Array.from({ length: items }, (_, i) => ({
    description: `Industrial valve Type-A, batch ${i}, stainless steel, DN50 PN16`,
    quantity: 1 + (i % 50),
    subtotal: { amount: `${(i * 7.31).toFixed(2)}`, currency: 'EUR' },
  }));
  return data;
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

async function measure(method: Method, file: string, minSeconds: number, minFiles: number): Promise<Measurement> {
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
  let files = 0;
  const start = process.hrtime.bigint();
  let seconds = 0;
  while (seconds < minSeconds || files < minFiles) {
    await once();
    files++;
    seconds = Number(process.hrtime.bigint() - start) / 1e9;
  }
  return { files, seconds, maxRssMb: process.resourceUsage().maxRSS / 1024 };
}

function runPhase(method: Method, file: string, minSeconds: number, minFiles: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, ['--phase', method, file, String(minSeconds), String(minFiles)], {
      execArgv: process.execArgv,
    });
    child.once('message', (m: Measurement) => resolve(m));
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`phase ${method} exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-bench-'));
  try {
    const meta = { document_type: 'invoice', issuer: 'Acme Supplies GmbH', issuer_id: 'DE123456789' };
    const sizes: [string, number, number, number][] = [
      ['typical', 450, 3, 50],
      ['large', 105_000, 10, 5],
    ];
    const rows: string[] = [];
    for (const [label, items, minSeconds, minFiles] of sizes) {
      const data = invoiceWith(items);
      // A typical file carries its rendered PDF; the large one a small PDF, so the data dominates.
      const pdf =
        label === 'large' ? (await pack({ data: invoiceWith(1), schema: INVOICE_SCHEMA, meta })).archive : undefined;
      const { archive } = await pack({
        data,
        schema: INVOICE_SCHEMA,
        meta,
        pdf: pdf ? inflateAll(pdf).get('visual.pdf') : undefined,
      });
      const file = join(dir, `${label}.sdf`);
      writeFileSync(file, archive);
      const inflated = [...inflateAll(archive).values()].reduce((n, b) => n + b.length, 0);
      const dataBytes = inflateAll(archive).get('data.json')!.length;
      const sdf = await runPhase('validate', file, minSeconds, minFiles);
      const base = await runPhase('baseline', file, minSeconds, minFiles);
      const rate = (m: Measurement): number => m.files / m.seconds;
      rows.push(
        `${label}: archive ${(archive.length / 1024).toFixed(0)} KB, inflated ${(inflated / 1024).toFixed(0)} KB ` +
          `(data.json ${(dataBytes / 1024).toFixed(0)} KB)`,
        `  validate()  ${rate(sdf).toFixed(1).padStart(8)} files/s   peak RSS ${sdf.maxRssMb.toFixed(0)} MB`,
        `  baseline    ${rate(base).toFixed(1).padStart(8)} files/s   peak RSS ${base.maxRssMb.toFixed(0)} MB`,
        `  ratio       ${(rate(base) / rate(sdf)).toFixed(2).padStart(8)}x slower     ${(sdf.maxRssMb / base.maxRssMb).toFixed(2)}x memory`,
      );
    }
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--phase') {
  const [, , , method, file, minSeconds, minFiles] = process.argv;
  const result = await measure(method as Method, file!, Number(minSeconds), Number(minFiles));
  process.send!(result);
  process.disconnect();
} else {
  await main();
}
