import type { JsonWebKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
// Types only: each command loads the part of the format core it runs, so `sdf --help` or `sdf keygen`
// does not load the PDF writer and `sdf validate` not the producer.
import type { KeyLookup, PackMetaInput, PublicKeyInfo, SignatureAlgorithm, ValidationResult } from '../sdf/index.js';
import type { DocumentSummary } from '../sdf/summary.js';

class CliUsageError extends Error {}

function assertExists(path: string): void {
  if (!existsSync(path)) throw new CliUsageError(`no such file: ${path}`);
}

async function readInput(path: string): Promise<Buffer> {
  assertExists(path);
  return readFile(path);
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  try {
    return JSON.parse((await readInput(path)).toString('utf8')) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    throw new CliUsageError(`${path} is not valid JSON`);
  }
}

interface KeyOptions {
  key?: string;
  jwks?: string;
  jwksUrl?: string;
}

/** --key PEM (trusted for any kid), --jwks file or --jwks-url: the keys a signature is trusted against. */
async function keyLookupFrom(options: KeyOptions): Promise<KeyLookup | undefined> {
  if (options.key) {
    const pem = (await readInput(options.key)).toString('utf8');
    return () => ({ publicKey: pem });
  }
  let jwks: { keys?: (JsonWebKey & { kid?: string })[] } | undefined;
  if (options.jwks) jwks = await readJson(options.jwks);
  if (options.jwksUrl) {
    // jose fetches and checks the JWK set (time-out, content type, shape).
    const { createRemoteJWKSet } = await import('jose');
    const remote = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 10_000 });
    try {
      await remote.reload();
    } catch (error) {
      throw new CliUsageError(`${options.jwksUrl}: ${(error as Error).message}`);
    }
    jwks = remote.jwks() as typeof jwks;
  }
  if (!jwks) return undefined;
  if (!Array.isArray(jwks.keys)) throw new CliUsageError('the JWK set has no "keys" array');
  const keys = jwks.keys;
  return (kid: string): PublicKeyInfo | undefined => {
    const jwk = keys.find((k) => k.kid === kid);
    return jwk ? { publicKey: jwk } : undefined;
  };
}

/** `sdf inspect`'s text form of a summary: one field a line, absent ones left out. */
function formatSummary(summary: DocumentSummary): string {
  const lines = [summary.title];
  const fields: [string, string | null][] = [
    ['number', summary.number],
    ['issuer', summary.issuer],
    ['counterparty', summary.counterparty],
    ['amount', summary.amount !== null ? `${summary.amount}${summary.currency ? ` ${summary.currency}` : ''}` : null],
    ['issued', summary.issue_date],
    ['due', summary.due_date],
    ['references', summary.references.length > 0 ? summary.references.join(', ') : null],
  ];
  for (const [name, value] of fields) if (value !== null) lines.push(`  ${name}: ${value}`);
  return lines.join('\n');
}

function printResult(result: ValidationResult): void {
  const lines = [
    `${result.valid ? 'VALID' : 'INVALID'}  sdf_version=${result.sdf_version ?? '?'}  type=${result.document_type ?? '?'}  signed=${result.is_signed}`,
  ];
  for (const [check, status] of Object.entries(result.checks)) lines.push(`  ${check.padEnd(10)} ${status}`);
  for (const warning of result.warnings) lines.push(`  warning: ${warning}`);
  if (result.error) {
    lines.push(`  ${result.error.code}${result.error.file ? ` (${result.error.file})` : ''}: ${result.error.message}`);
    for (const d of result.error.details) lines.push(`    ${d.path || '/'}: ${d.message}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The format commands of `sdf`; each sets process.exitCode rather than exiting, so errors map centrally. */
export function registerFormatCommands(program: Command): void {
  program
    .command('validate <files...>')
    .description('validate SDF files (exit 1 when any is invalid)')
    .option('--json', 'print the result as JSON (with several files, an array of {file, result})')
    .option('--key <pem>', 'trusted public key (PEM)')
    .option('--jwks <file>', 'trusted keys as a JWK set file')
    .option('--jwks-url <url>', 'trusted keys from a JWKS URL')
    .action(async (files: string[], options: KeyOptions & { json?: boolean }) => {
      // Every file must exist before the first is judged: a typo is a usage error, not a half-done run.
      files.forEach(assertExists);
      const keyLookup = await keyLookupFrom(options);
      // The same budgets as the service (F6): a hostile schema or a memory bomb ends as a result, not a hang.
      // One pool for every file: its process starts once.
      const { createValidationPool } = await import('../sdf/pool/pool.js');
      const pool = createValidationPool({ maxWorkers: 1 });
      const results: { file: string; result: ValidationResult }[] = [];
      try {
        for (const file of files) {
          const result = await pool.validate(await readInput(file), { keyLookup });
          results.push({ file, result });
          if (!options.json) {
            if (files.length > 1) process.stdout.write(`${file}\n`);
            printResult(result);
          }
        }
      } finally {
        await pool.destroy();
      }
      if (options.json) {
        const out = files.length === 1 ? results[0]!.result : results;
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      }
      process.exitCode = results.every(({ result }) => result.valid) ? 0 : 1;
    });

  program
    .command('inspect <file>')
    .description('list the entries and meta.json of an SDF file')
    .option('--json', 'print as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const { openArchive } = await import('../sdf/zip/archive.js');
      const archive = await openArchive(await readInput(file));
      const entries = archive.entries.map((e) => ({
        name: e.name,
        size: archive.files.get(e.name)?.length ?? 0,
        compressed: e.compressedSize,
      }));
      const metaBytes = archive.files.get('meta.json');
      const meta: unknown = metaBytes ? JSON.parse(metaBytes.toString('utf8')) : null;
      const [{ summarizeDataBytes }, { DEFAULT_LIMITS }] = await Promise.all([
        import('../sdf/summary.js'),
        import('../sdf/limits.js'),
      ]);
      // The summary the service stores for this file (null when data.json does not parse).
      const summary = summarizeDataBytes(archive.files.get('data.json'), meta, DEFAULT_LIMITS);
      const info = { entries, meta, is_signed: archive.files.has('signature.sig'), summary };
      if (options.json) process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
      else {
        for (const e of entries) process.stdout.write(`${String(e.size).padStart(10)}  ${e.name}\n`);
        process.stdout.write(`signed: ${info.is_signed}\nmeta: ${JSON.stringify(meta, null, 2)}\n`);
        process.stdout.write(`summary: ${summary ? formatSummary(summary) : 'none (data.json does not parse)'}\n`);
      }
    });

  program
    .command('pack')
    .description('build an SDF file from data, schema and meta fields (validated before writing)')
    .requiredOption('--data <file>', 'data.json')
    .requiredOption('--schema <file>', 'schema.json')
    .option('--meta <file>', 'meta fields as JSON (document_type, issuer, issuer_id, recipient, schema_id, locale)')
    .option('--type <document_type>', 'document type (overrides --meta)')
    .option('--issuer <name>', 'issuer name (overrides --meta)')
    .requiredOption('-o, --out <file>', 'output .sdf file')
    .option('--issuer-id <id>')
    .option('--recipient <name>')
    .option('--schema-id <id>')
    .option('--locale <tag>')
    .option('--pdf <file>', 'visual.pdf (rendered from data when absent)')
    .action(async (o: Record<string, string | undefined>) => {
      const meta = { ...(o.meta ? await readMetaFields(o.meta) : {}) };
      const flags = { document_type: o.type, issuer: o.issuer, issuer_id: o.issuerId, recipient: o.recipient };
      for (const [key, value] of Object.entries({ ...flags, schema_id: o.schemaId, locale: o.locale })) {
        if (value !== undefined) meta[key] = value;
      }
      if (!meta.document_type || !meta.issuer) throw new CliUsageError('give --type and --issuer, or --meta with both');
      const { pack } = await import('../sdf/producer/pack.js');
      const { archive, meta: written } = await pack({
        data: await readJson(o.data!),
        schema: await readJson(o.schema!),
        meta: meta as unknown as PackMetaInput,
        pdf: o.pdf ? await readInput(o.pdf) : undefined,
      });
      await writeFile(o.out!, archive);
      process.stdout.write(`${o.out} document_id=${written.document_id}\n`);
    });

  program
    .command('render')
    .description('write only the visual.pdf that pack would make from the data, for a quick look')
    .requiredOption('--data <file>', 'data.json')
    .requiredOption('-o, --out <file>', 'output PDF')
    .action(async (o: { data: string; out: string }) => {
      const data = await readJson(o.data);
      if (typeof data !== 'object' || data === null || Array.isArray(data))
        throw new CliUsageError(`${o.data}: not a JSON object`);
      const { render } = await import('../sdf/producer/render.js');
      await writeFile(o.out, await render(data));
      process.stdout.write(`${o.out}\n`);
    });

  program
    .command('sign <file>')
    .description('add signature.sig (no other entry changes)')
    .requiredOption('--key <pem>', 'private key (PEM, PKCS#8)')
    .option('--kid <id>', 'key id (default: JWK thumbprint)')
    .option('-o, --out <file>', 'output file (default: in place)')
    .action(async (file: string, o: { key: string; kid?: string; out?: string }) => {
      const [{ signArchive }, { verifyArchive }] = await Promise.all([
        import('../sdf/signature/sign.js'),
        import('../sdf/signature/verify.js'),
      ]);
      const signed = await signArchive(await readInput(file), {
        privateKeyPem: (await readInput(o.key)).toString('utf8'),
        keyId: o.kid,
      });
      const out = o.out ?? file;
      await writeFile(out, signed);
      // What was written, read back from the signature itself; on stderr, so stdout stays free for a pipe.
      const written = await verifyArchive(signed);
      process.stderr.write(`signed ${out} (key id ${written.key_id ?? '-'}, ${written.algorithm ?? '-'})\n`);
    });

  program
    .command('verify <file>')
    .description('verify signature.sig (exit 1 when invalid, or untrusted when keys are given)')
    .option('--key <pem>', 'trusted public key (PEM)')
    .option('--jwks <file>', 'trusted keys as a JWK set file')
    .option('--jwks-url <url>', 'trusted keys from a JWKS URL')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, o: KeyOptions & { json?: boolean }) => {
      const keyLookup = await keyLookupFrom(o);
      const { verifyArchive } = await import('../sdf/signature/verify.js');
      const result = await verifyArchive(await readInput(file), { keyLookup });
      if (o.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      else
        process.stdout.write(
          `${result.valid ? (result.trusted ? 'VALID, trusted' : 'VALID, untrusted') : `INVALID: ${result.reason}`} (${result.algorithm ?? '-'}, kid ${result.key_id ?? '-'})\n`,
        );
      process.exitCode = result.valid && (result.trusted || !keyLookup) ? 0 : 1;
    });

  program
    .command('keygen')
    .description('generate a signing key pair')
    .option('--algorithm <alg>', 'ECDSA-P256 or RSA-2048', 'ECDSA-P256')
    .option('--kid <id>', 'key id (default: JWK thumbprint)')
    .requiredOption('--out-dir <dir>', 'where to write private.pem, public.pem and public.jwk.json')
    .action(async (o: { algorithm: string; kid?: string; outDir: string }) => {
      if (o.algorithm !== 'ECDSA-P256' && o.algorithm !== 'RSA-2048')
        throw new CliUsageError(`unknown algorithm ${o.algorithm}`);
      const { generateKeyPair } = await import('../sdf/signature/keys.js');
      const pair = generateKeyPair(o.algorithm as SignatureAlgorithm, o.kid);
      await mkdir(o.outDir, { recursive: true });
      await writeFile(join(o.outDir, 'private.pem'), pair.privateKeyPem, { mode: 0o600 });
      await writeFile(join(o.outDir, 'public.pem'), pair.publicKeyPem);
      await writeFile(join(o.outDir, 'public.jwk.json'), `${JSON.stringify({ keys: [pair.publicJwk] }, null, 2)}\n`);
      process.stdout.write(`${pair.algorithm} key ${pair.keyId} written to ${o.outDir}\n`);
    });

  program
    .command('extract-pdf <file>')
    .description('write visual.pdf out of an SDF file (safe read)')
    .requiredOption('-o, --out <file>', 'output PDF')
    .action(async (file: string, o: { out: string }) => {
      const { openArchive } = await import('../sdf/zip/archive.js');
      const archive = await openArchive(await readInput(file));
      const pdf = archive.files.get('visual.pdf');
      if (!pdf) throw new CliUsageError('the file has no visual.pdf');
      await writeFile(o.out, pdf);
    });
}

export { CliUsageError };

const META_FIELDS = ['document_type', 'issuer', 'issuer_id', 'recipient', 'schema_id', 'locale'];

/** The producer's meta inputs; sdf_version, document_id and created_at are always generated (rule 10). */
async function readMetaFields(file: string): Promise<Record<string, string>> {
  const raw = await readJson(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new CliUsageError(`${file}: not a JSON object`);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!META_FIELDS.includes(key))
      throw new CliUsageError(`${file}: ${key} is not a field pack takes (${META_FIELDS.join(', ')})`);
    if (typeof value !== 'string') throw new CliUsageError(`${file}: ${key} must be a string`);
    out[key] = value;
  }
  return out;
}
