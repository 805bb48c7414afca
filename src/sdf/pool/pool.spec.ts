import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '../signature/keys.js';
import { signArchive } from '../signature/sign.js';
import { buildSdf, invoiceData } from '../testing/build-sdf.js';
import { validate } from '../validate.js';
import { createValidationPool, WorkerTaskError } from './pool.js';

const catastrophicRegex = (): Buffer =>
  buildSdf({
    schema: { type: 'object', properties: { invoice_number: { type: 'string', pattern: '^(a+)+$' } } },
    data: { ...invoiceData(), invoice_number: `${'a'.repeat(40)}!` },
  });

describe('validation pool (safety budget)', () => {
  const pool = createValidationPool({ maxWorkers: 2, timeoutMs: 3_000, maxOldGenerationSizeMb: 128 });
  afterAll(() => pool.destroy());

  it('gives the same result as in-process validation', async () => {
    const sdf = buildSdf();
    expect(await pool.validate(sdf)).toEqual(await validate(sdf));
  });

  it("looks a signer's key up in the context of the caller, not of whoever started the process", async () => {
    const key = generateKeyPair('ECDSA-P256');
    const archive = await signArchive(buildSdf(), { privateKeyPem: key.privateKeyPem, keyId: key.keyId });
    const caller = new AsyncLocalStorage<string>();
    const single = createValidationPool({ maxWorkers: 1, interactiveWorkers: 0 });
    try {
      // One process for all: the first caller starts it, the others queue behind and are answered by it.
      const seen = await Promise.all(
        ['a', 'b', 'c'].map((who) =>
          caller.run(who, async () => {
            let lookedUpAs: string | undefined;
            const result = await single.validate(archive, {
              keyLookup: (kid) => {
                lookedUpAs = caller.getStore();
                return kid === key.keyId ? { publicKey: key.publicKeyPem } : undefined;
              },
            });
            expect(result.signature?.trusted).toBe(true);
            return lookedUpAs;
          }),
        ),
      );
      expect(seen).toEqual(['a', 'b', 'c']);
    } finally {
      await single.destroy();
    }
  });

  it('ends a catastrophic regex as a clear failure and keeps serving', async () => {
    const result = await pool.validate(catastrophicRegex());
    expect(result.valid).toBe(false);
    expect(result.error?.code).toBe('SDF_ERROR_INVALID_SCHEMA');
    expect(result.error?.message).toBe('the data check did not finish within the time budget of 3000 ms');
    expect(result.checks).toMatchObject({
      container: 'pass',
      meta: 'pass',
      schema: 'pass',
      data: 'fail',
      pdf: 'skipped',
    });
    // The worker was retired and replaced; the pool and this process still answer.
    expect((await pool.validate(buildSdf())).valid).toBe(true);
  });

  it('refuses JSON that would parse into millions of objects before parsing it', async () => {
    // About 3 MB of JSON, three million objects once parsed: refused by the value count, not by the heap.
    const data = Buffer.from(`{"document_type":"invoice","items":[${'{},'.repeat(3_000_000)}{}]}`);
    const result = await pool.validate(buildSdf({ entries: { 'data.json': data } }));
    expect(result.error).toMatchObject({
      code: 'SDF_ERROR_ARCHIVE_TOO_LARGE',
      file: 'data.json',
      message: 'data.json holds more than 1000000 values',
    });
    expect(result.checks).toMatchObject({ schema: 'pass', data: 'fail' });
  });

  it('refuses nesting deeper than the limit in data.json and in schema.json', async () => {
    const deep = (n: number): Buffer => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`);
    const deepData = Buffer.from(`{"document_type":"invoice","deep":${deep(300).toString()}}`);
    const data = await pool.validate(buildSdf({ entries: { 'data.json': deepData } }));
    expect(data.error).toMatchObject({
      code: 'SDF_ERROR_INVALID_DATA',
      file: 'data.json',
      message: 'data.json nests deeper than 256 levels',
    });
    const schema = Buffer.from(`{"type":"object","x-deep":${deep(300).toString()}}`);
    const result = await pool.validate(buildSdf({ entries: { 'schema.json': schema } }));
    expect(result.error).toMatchObject({ code: 'SDF_ERROR_INVALID_SCHEMA', file: 'schema.json' });
  });

  it('ends a file that outgrows the heap as SDF_ERROR_ARCHIVE_TOO_LARGE, and the process lives on', async () => {
    const small = createValidationPool({ maxWorkers: 1, timeoutMs: 60_000, maxOldGenerationSizeMb: 32 });
    try {
      // One string of 24 million characters outside Latin-1 (48 MB of UTF-8, under the 50 MB entry limit)
      // is one value, so no pre-check refuses it. Parsed, it is a 48 MB two-byte string on a 32 MB heap
      // (a Latin-1 character such as é would be stored in one byte each, 24 MB, which can fit): one
      // allocation that cannot fit whatever the collector does, so the memory budget ends it, never time.
      const data = Buffer.from(`{"document_type":"invoice","blob":"${'ā'.repeat(24_000_000)}"}`);
      const result = await small.validate(buildSdf({ entries: { 'data.json': data } }));
      expect(result.error).toMatchObject({
        code: 'SDF_ERROR_ARCHIVE_TOO_LARGE',
        file: 'data.json',
        message: 'the data check exceeded the memory budget of 32 MB',
      });
      expect(result.checks).toMatchObject({ schema: 'pass', data: 'fail', pdf: 'skipped' });
      expect((await small.validate(buildSdf())).valid).toBe(true);
    } finally {
      await small.destroy();
    }
  });

  describe('reading data.json out of an archive', () => {
    const dataBytes = Buffer.from('{"document_type":"invoice", "note":"kept byte for byte"}');
    const archive = (): Buffer => buildSdf({ entries: { 'data.json': dataBytes } });

    it('returns its bytes, or writes them to a new private file and returns only the size', async () => {
      expect(await pool.extractData(archive())).toEqual({ size: dataBytes.length, data: dataBytes });

      const dir = mkdtempSync(join(tmpdir(), 'sdf-pool-data-'));
      try {
        const output = join(dir, 'data.json');
        expect(await pool.extractData(archive(), { output })).toEqual({ size: dataBytes.length });
        expect(readFileSync(output)).toEqual(dataBytes);
        expect(statSync(output).mode & 0o777).toBe(0o600);
        // Never over an existing file; the file call's code and call come along (a full disk is told by them).
        const again = pool.extractData(archive(), { output });
        await expect(again).rejects.toThrow(WorkerTaskError);
        await expect(again).rejects.toMatchObject({ code: 'EEXIST', syscall: 'open' });
        expect(readFileSync(output)).toEqual(dataBytes);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps to the F2 limits and refuses an archive without data.json', async () => {
      const big = Buffer.from(`{"document_type":"invoice","pad":"${'x'.repeat(200_000)}"}`);
      await expect(
        pool.extractData(buildSdf({ entries: { 'data.json': big } }), { limits: { maxEntryBytes: 100_000 } }),
      ).rejects.toThrow('entry data.json declares 200036 bytes; the limit is 100000');
      await expect(pool.extractData(buildSdf({ entries: { 'data.json': null } }))).rejects.toThrow(
        'the archive holds no data.json',
      );
    });
  });

  it('destroys cleanly while a worker is busy, answering the file it held', async () => {
    const busy = createValidationPool({ maxWorkers: 1, timeoutMs: 60_000 });
    const pending = expect(busy.validate(catastrophicRegex())).rejects.toThrow('the validation pool is destroyed');
    const queued = expect(busy.validate(buildSdf())).rejects.toThrow('the validation pool is destroyed');
    // Give the worker time to start on the regex: the second file sits in the queue meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await busy.destroy();
    await pending;
    await queued;
    await expect(busy.validate(buildSdf())).rejects.toThrow('the validation pool is destroyed');
  });

  it('leaves no stage board open when its processes end (idle, out of time, destroyed)', async () => {
    /** This process's descriptors of stage boards (unlinked files named sdf-stage-*). */
    const openBoards = (): number =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).includes('/sdf-stage-');
        } catch {
          return false; // the descriptor readdirSync itself used, closed by now
        }
      }).length;
    const before = openBoards();
    const brief = createValidationPool({ maxWorkers: 1, interactiveWorkers: 0, timeoutMs: 1_000, idleTimeoutMs: 50 });
    for (let i = 0; i < 3; i++) {
      expect((await brief.validate(buildSdf())).valid).toBe(true);
      // Longer than the idle timeout: the process exits and the next file starts a new one.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect((await brief.validate(catastrophicRegex())).error?.code).toBe('SDF_ERROR_INVALID_SCHEMA');
    expect((await brief.validate(buildSdf())).valid).toBe(true);
    await brief.destroy();
    // The exits' handlers run once the processes are gone.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // At most as many as before: another pool's idle process may have ended meanwhile.
    expect(openBoards()).toBeLessThanOrEqual(before);
  });

  describe('lanes and tenants', () => {
    /** Runs `validate` and records, in `order`, the label of each file as its answer arrives. */
    function tracked(order: string[], label: string, p: Promise<unknown>): Promise<unknown> {
      return p.then((r) => {
        order.push(label);
        return r;
      });
    }

    it('serves an interactive file at once in its own process while background files hold the rest', async () => {
      // The budget is long beside starting a process, so the order below does not depend on the machine's speed.
      const fair = createValidationPool({ maxWorkers: 1, interactiveWorkers: 1, timeoutMs: 4_000 });
      try {
        const order: string[] = [];
        const background = [1, 2].map((i) =>
          tracked(order, `a${i}`, fair.validate(catastrophicRegex(), { tenant: 'a' })),
        );
        const interactive = await tracked(order, 'b', fair.validate(buildSdf(), { tenant: 'b', lane: 'interactive' }));
        expect((interactive as { valid: boolean }).valid).toBe(true);
        // Answered before even the first background file ran out of its budget.
        expect(order[0]).toBe('b');
        await Promise.all(background);
        expect(order).toEqual(['b', 'a1', 'a2']);
      } finally {
        await fair.destroy();
      }
    });

    it('takes background files from each waiting tenant in turn, not in arrival order', async () => {
      const fair = createValidationPool({ maxWorkers: 1, interactiveWorkers: 1, timeoutMs: 1_000 });
      try {
        const order: string[] = [];
        const files = [
          ...[1, 2, 3, 4].map((i) => tracked(order, `a${i}`, fair.validate(catastrophicRegex(), { tenant: 'a' }))),
          tracked(order, 'b1', fair.validate(buildSdf(), { tenant: 'b' })),
          tracked(order, 'b2', fair.validate(buildSdf(), { tenant: 'b' })),
        ];
        await Promise.all(files);
        // a1 was running when b's files came; a2 waited longest for a turn, then b1, then a3 and b2 alternate.
        expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'b2', 'a4']);
      } finally {
        await fair.destroy();
      }
    });
  });
});
