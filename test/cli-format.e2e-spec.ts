import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive, validate, type ValidationResult, type VerifyResult } from '../src/sdf/index.js';
import { buildSdf, invoiceData, INVOICE_SCHEMA } from '../src/sdf/testing/build-sdf.js';
import { actionPdf } from '../src/sdf/testing/pdf-actions.js';
import { signWithManifest } from '../src/sdf/testing/sign-manifest.js';
import { generateKeyPair } from '../src/sdf/signature/keys.js';
import { distCli, projectRoot, requireBuild, runNode, type RunResult } from './helpers/processes.js';

const hasCommand = (name: string): boolean => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

/** The built `sdf` command, as a user runs it: each format command, its output and its exit code. */
describe('sdf format commands (built binary)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-cli-'));
  const at = (name: string): string => join(dir, name);
  const sdf = (...args: string[]): Promise<RunResult> => runNode([distCli, ...args], { PATH: process.env.PATH });
  let jwksServer: Server;
  let jwksUrl: string;

  beforeAll(async () => {
    requireBuild(distCli);
    // Rule 11 is checked with the real tools; poppler-utils comes from the distribution when absent.
    if (!hasCommand('pdftotext'))
      execFileSync('apt-get', ['install', '-y', '-q', 'poppler-utils'], { stdio: 'ignore' });
    writeFileSync(at('data.json'), JSON.stringify(invoiceData()));
    writeFileSync(at('schema.json'), JSON.stringify(INVOICE_SCHEMA));
    // A JWKS endpoint on loopback serving whatever key set the test wrote to jwks-served.json.
    jwksServer = createServer((req, res) => {
      if (req.url !== '/jwks.json' || !existsSync(at('jwks-served.json'))) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(readFileSync(at('jwks-served.json')));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => jwksServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('pack writes a file that plain unzip lists and whose PDF shows the invoice number', async () => {
    const packed = await sdf(
      'pack',
      ...['--data', at('data.json'), '--schema', at('schema.json'), '--type', 'invoice'],
      ...['--issuer', 'Acme Supplies GmbH', '--issuer-id', 'DE123456789', '-o', at('invoice.sdf')],
    );
    expect(packed.stderr).toBe('');
    expect(packed.code).toBe(0);
    expect(packed.stdout).toMatch(/document_id=[0-9a-f-]{36}/);

    const listing = execFileSync('unzip', ['-l', at('invoice.sdf')]).toString();
    for (const name of ['visual.pdf', 'data.json', 'schema.json', 'meta.json']) expect(listing).toContain(name);
    const pdf = execFileSync('unzip', ['-p', at('invoice.sdf'), 'visual.pdf']);
    writeFileSync(at('unzipped.pdf'), pdf);
    expect(execFileSync('pdftotext', [at('unzipped.pdf'), '-']).toString()).toContain('INV-2026-00142');
  });

  it('inspect lists the entries and meta.json, as text and as JSON', async () => {
    const text = await sdf('inspect', at('invoice.sdf'));
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/\d+ {2}visual\.pdf/);
    expect(text.stdout).toContain('signed: false');
    const json = await sdf('inspect', '--json', at('invoice.sdf'));
    expect(json.code).toBe(0);
    const info = JSON.parse(json.stdout) as {
      entries: { name: string }[];
      meta: { issuer: string };
      is_signed: boolean;
    };
    expect(info.entries.map((e) => e.name).sort()).toEqual(['data.json', 'meta.json', 'schema.json', 'visual.pdf']);
    expect(info.meta.issuer).toBe('Acme Supplies GmbH');
    expect(info.is_signed).toBe(false);
  });

  it('inspect prints the summary the service stores, as text and as JSON; none when data.json does not parse', async () => {
    const example = (file: string): string => join(projectRoot, 'examples', 'purchase-order', file);
    const packed = await sdf(
      'pack',
      ...['--data', example('data.json'), '--schema', example('schema.json'), '--meta', example('meta.json')],
      ...['-o', at('order.sdf')],
    );
    expect(packed.code).toBe(0);
    const text = await sdf('inspect', at('order.sdf'));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'summary: Purchase order PO-2026-0815\n  number: PO-2026-0815\n  issuer: Globex Ltd\n  counterparty: Acme GmbH\n' +
        '  amount: 1440.00 EUR\n  issued: 2026-03-02\n  due: 2026-03-20\n',
    );
    const json = JSON.parse((await sdf('inspect', '--json', at('order.sdf'))).stdout) as { summary: unknown };
    expect(json.summary).toEqual({
      title: 'Purchase order PO-2026-0815',
      number: 'PO-2026-0815',
      issuer: 'Globex Ltd',
      counterparty: 'Acme GmbH',
      amount: '1440.00',
      currency: 'EUR',
      issue_date: '2026-03-02',
      due_date: '2026-03-20',
      references: [],
    });
    // The same summary the validation (and so the service) computes.
    expect((await validate(readFileSync(at('order.sdf')))).summary).toEqual(json.summary);

    writeFileSync(at('broken-data.sdf'), buildSdf({ entries: { 'data.json': Buffer.from('{"invoice_number": ') } }));
    const broken = await sdf('inspect', at('broken-data.sdf'));
    expect(broken.code).toBe(0);
    expect(broken.stdout).toContain('summary: none (data.json does not parse)');
    expect(JSON.parse((await sdf('inspect', '--json', at('broken-data.sdf'))).stdout)).toMatchObject({ summary: null });
  });

  it('validate says what the library says, in words and as JSON', async () => {
    const human = await sdf('validate', at('invoice.sdf'));
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^VALID {2}sdf_version=0\.1 {2}type=invoice {2}signed=false/);
    expect(human.stdout).toMatch(/data {7}pass/);
    const json = await sdf('validate', '--json', at('invoice.sdf'));
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await validate(readFileSync(at('invoice.sdf'))));
  });

  it('validate exits 1 with the SDF error for a bad file', async () => {
    const bad = buildSdf({ data: { ...invoiceData(), totals: { gross: { amount: '1.00', currency: 'EURO' } } } });
    writeFileSync(at('bad.sdf'), bad);
    const json = await sdf('validate', '--json', at('bad.sdf'));
    expect(json.code).toBe(1);
    const result = JSON.parse(json.stdout) as ValidationResult;
    expect(result).toEqual(await validate(bad));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_INVALID_DATA', file: 'data.json' });
    const human = await sdf('validate', at('bad.sdf'));
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^INVALID/);
    expect(human.stdout).toContain('SDF_ERROR_INVALID_DATA (data.json)');
    expect(human.stdout).toContain('/totals/gross/currency');

    writeFileSync(at('not-a-zip.sdf'), 'plain text');
    const notZip = await sdf('validate', '--json', at('not-a-zip.sdf'));
    expect(notZip.code).toBe(1);
    expect((JSON.parse(notZip.stdout) as ValidationResult).error?.code).toBe('SDF_ERROR_NOT_ZIP');
    const inspect = await sdf('inspect', at('not-a-zip.sdf'));
    expect(inspect.code).toBe(1);
    expect(inspect.stderr).toMatch(/^SDF_ERROR_NOT_ZIP: /);
  });

  it('validate prints the warnings of a PDF that calls a URL when opened, and fails a signed_at of markup', async () => {
    const pdf = await actionPdf({
      openActionUri: 'https://tracker.example/o.gif',
      pageOpenUri: 'https://pixel.example/',
    });
    writeFileSync(at('beacon.sdf'), buildSdf({ pdf }));
    const human = await sdf('validate', at('beacon.sdf'));
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(
      '  warning: PDF_OPEN_ACTION_URI: visual.pdf contacts https://tracker.example as soon as it is opened\n',
    );
    expect(human.stdout).toContain(
      '  warning: PDF_AUTO_ACTION_URI: visual.pdf contacts https://pixel.example without a click (additional action /O)\n',
    );
    const signed = await signWithManifest(buildSdf(), generateKeyPair('ECDSA-P256').privateKeyPem, {
      signed_at: '<b>x</b>',
    });
    writeFileSync(at('markup-signed-at.sdf'), signed);
    const verify = await sdf('verify', '--json', at('markup-signed-at.sdf'));
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      valid: false,
      reason: 'signature.sig: signed_at must be an RFC 3339 date-time with a timezone offset',
    });
    const validated = await sdf('validate', '--json', at('markup-signed-at.sdf'));
    expect(validated.code).toBe(1);
    expect((JSON.parse(validated.stdout) as ValidationResult).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
  });

  it('validate takes several files: one result per file in order, exit 1 when any is invalid', async () => {
    const files = [at('invoice.sdf'), at('bad.sdf'), at('not-a-zip.sdf')];
    const json = await sdf('validate', '--json', ...files);
    expect(json.code).toBe(1);
    const results = JSON.parse(json.stdout) as { file: string; result: ValidationResult }[];
    expect(results.map((r) => r.file)).toEqual(files);
    for (const { file, result } of results) expect(result).toEqual(await validate(readFileSync(file)));
    expect(results.map((r) => r.result.valid)).toEqual([true, false, false]);

    const human = await sdf('validate', ...files);
    expect(human.code).toBe(1);
    const heads = human.stdout.split('\n').filter((l) => files.includes(l));
    expect(heads).toEqual(files);
    expect(human.stdout).toContain('SDF_ERROR_NOT_ZIP');

    const allValid = await sdf('validate', '--json', at('invoice.sdf'), at('invoice.sdf'));
    expect(allValid.code).toBe(0);
    // A missing file anywhere is a usage error before anything is judged.
    const missing = await sdf('validate', at('invoice.sdf'), at('no-such.sdf'));
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('no-such.sdf');
  });

  it('keygen writes both key kinds; sign adds signature.sig and changes nothing else', async () => {
    const ec = await sdf('keygen', '--out-dir', at('ec'), '--kid', 'cli-ec');
    expect(ec.code).toBe(0);
    expect(ec.stdout).toContain('ECDSA-P256 key cli-ec');
    const rsa = await sdf('keygen', '--algorithm', 'RSA-2048', '--out-dir', at('rsa'));
    expect(rsa.code).toBe(0);
    for (const key of ['ec', 'rsa']) {
      for (const file of ['private.pem', 'public.pem', 'public.jwk.json'])
        expect(existsSync(at(`${key}/${file}`))).toBe(true);
    }
    const jwks = JSON.parse(readFileSync(at('ec/public.jwk.json'), 'utf8')) as { keys: { kid: string; crv: string }[] };
    expect(jwks.keys[0]).toMatchObject({ kid: 'cli-ec', crv: 'P-256' });

    const signed = await sdf(
      'sign',
      at('invoice.sdf'),
      '--key',
      at('ec/private.pem'),
      '--kid',
      'cli-ec',
      '-o',
      at('signed.sdf'),
    );
    expect(signed.code).toBe(0);
    // What was written goes to stderr; stdout stays empty for whatever pipes it.
    expect(signed.stdout).toBe('');
    expect(signed.stderr).toBe(`signed ${at('signed.sdf')} (key id cli-ec, ECDSA-P256)\n`);
    const before = await openArchive(at('invoice.sdf'));
    const after = await openArchive(at('signed.sdf'));
    expect([...after.files.keys()].sort()).toEqual([...before.files.keys(), 'signature.sig'].sort());
    for (const [name, bytes] of before.files) expect(after.files.get(name)!.equals(bytes)).toBe(true);
    const rsaSigned = await sdf('sign', at('invoice.sdf'), '--key', at('rsa/private.pem'), '-o', at('rsa-signed.sdf'));
    expect(rsaSigned.code).toBe(0);
    expect(rsaSigned.stdout).toBe('');
    const rsaKid = (JSON.parse(readFileSync(at('rsa/public.jwk.json'), 'utf8')) as { keys: { kid: string }[] }).keys[0]
      .kid;
    expect(rsaSigned.stderr).toBe(`signed ${at('rsa-signed.sdf')} (key id ${rsaKid}, RSA-2048)\n`);
  });

  it('--version prints the version of package.json and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const res = await sdf(flag);
      expect(res.code).toBe(0);
      expect(res.stdout).toBe(`${version}\n`);
    }
  });

  it('loads only what the command runs: --help, keygen, verify and inspect load neither the PDF writer nor the service', async () => {
    // Prints, as the process exits, every CommonJS module it loaded (pdf-lib, ajv and NestJS are CommonJS).
    const hook = at('loaded-modules.mjs');
    writeFileSync(
      hook,
      [
        "import { createRequire } from 'node:module';",
        'const cache = createRequire(import.meta.url).cache;',
        "process.on('exit', () => process.stderr.write(`\\nLOADED ${JSON.stringify(Object.keys(cache))}\\n`));",
      ].join('\n'),
    );
    const packages = async (...args: string[]): Promise<string[]> => {
      const res = await runNode(['--import', hook, distCli, ...args], { PATH: process.env.PATH });
      expect(res.code, res.stderr).toBe(0);
      const paths = JSON.parse(/^LOADED (.*)$/m.exec(res.stderr)![1]!) as string[];
      const names = paths.map((p) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)?.[1]).filter(Boolean);
      return [...new Set(names as string[])];
    };
    const signed = join(projectRoot, 'test/vectors/es256-signed.sdf');
    const heavy = /^(pdf-lib|@pdf-lib\/.*|ajv|@nestjs\/.*|typeorm|pg|ioredis|bullmq)$/;
    for (const args of [
      ['--help'],
      ['keygen', '--out-dir', at('light-keys')],
      ['verify', signed],
      ['inspect', signed],
    ]) {
      expect(
        (await packages(...args)).filter((name) => heavy.test(name)),
        args.join(' '),
      ).toEqual([]);
    }
    // The hook sees what a command does load: render needs the PDF writer and its fonts.
    await expect(packages('render', '--data', at('data.json'), '-o', at('light.pdf'))).resolves.toEqual(
      expect.arrayContaining(['pdf-lib', '@pdf-lib/fontkit']),
    );
  });

  it('verify trusts a PEM, a JWK set file and a JWKS URL, and says untrusted or invalid otherwise', async () => {
    const viaPem = await sdf('verify', at('signed.sdf'), '--key', at('ec/public.pem'));
    expect(viaPem.code).toBe(0);
    expect(viaPem.stdout).toBe('VALID, trusted (ECDSA-P256, kid cli-ec)\n');
    const viaFile = await sdf('verify', '--json', at('signed.sdf'), '--jwks', at('ec/public.jwk.json'));
    expect(viaFile.code).toBe(0);
    expect(JSON.parse(viaFile.stdout)).toMatchObject({ valid: true, trusted: true, key_id: 'cli-ec' });
    writeFileSync(at('jwks-served.json'), readFileSync(at('ec/public.jwk.json')));
    const viaUrl = await sdf('verify', '--json', at('signed.sdf'), '--jwks-url', jwksUrl);
    expect(viaUrl.code).toBe(0);
    expect(JSON.parse(viaUrl.stdout) as VerifyResult).toMatchObject({ valid: true, trusted: true });
    const rsaViaUrl = await sdf('verify', at('rsa-signed.sdf'), '--jwks-url', jwksUrl);
    expect(rsaViaUrl.code).toBe(1); // keys were given, none is this file's: valid but untrusted
    expect(rsaViaUrl.stdout).toMatch(/^VALID, untrusted \(RSA-2048/);
    const embeddedOnly = await sdf('verify', at('rsa-signed.sdf'));
    expect(embeddedOnly.code).toBe(0);
    expect(embeddedOnly.stdout).toMatch(/^VALID, untrusted/);

    const wrongKey = await sdf('verify', at('signed.sdf'), '--key', at('rsa/public.pem'));
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stdout).toMatch(/^INVALID: /);
    const tampered = await sdf('verify', '--json', join('test', 'vectors', 'es256-tampered.sdf'));
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toMatchObject({
      valid: false,
      reason: 'entry data.json was changed after signing',
    });
    const validateTampered = await sdf('validate', '--json', join('test', 'vectors', 'es256-tampered.sdf'));
    expect(validateTampered.code).toBe(1);
    expect((JSON.parse(validateTampered.stdout) as ValidationResult).error?.code).toBe('SDF_ERROR_INVALID_SIGNATURE');
  });

  it('extract-pdf writes visual.pdf exactly as the archive holds it', async () => {
    const out = await sdf('extract-pdf', at('signed.sdf'), '-o', at('extracted.pdf'));
    expect(out.code).toBe(0);
    const { files } = await openArchive(at('signed.sdf'));
    expect(readFileSync(at('extracted.pdf')).equals(files.get('visual.pdf')!)).toBe(true);
  });

  it.each([
    ['a missing argument', ['validate']],
    ['an unknown option', ['validate', '--no-such-option', 'x.sdf']],
    ['an unknown command', ['no-such-command']],
    ['a missing file', ['validate', 'no-such-file.sdf']],
    ['a missing required option', ['pack', '--data', 'data.json']],
    ['an unknown key algorithm', ['keygen', '--algorithm', 'DSA', '--out-dir', 'never-written']],
    ['a JWK set file that is not JSON', ['verify', 'x.sdf', '--jwks', 'package-lock.json.nope']],
  ])('exits 2 on %s', async (_label, args) => {
    const result = await sdf(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe('');
    expect(result.stdout).toBe('');
  });

  it('exits 3 when something fails that is neither the file nor the command line', async () => {
    // Writing the output over a directory fails in the file system: not a usage error, not an SDF error.
    const result = await sdf('extract-pdf', at('signed.sdf'), '-o', dir);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^sdf: internal error: EISDIR/);
  });
});
