import { afterAll, describe, expect, it } from 'vitest';
import { buildSdf, invoiceData } from '../testing/build-sdf.js';
import { validate } from '../validate.js';
import { createValidationPool } from './pool.js';

describe('validation pool (safety budget)', () => {
  const pool = createValidationPool({ maxThreads: 2, timeoutMs: 3_000, maxOldGenerationSizeMb: 128 });
  afterAll(() => pool.destroy());

  it('gives the same result as in-process validation', async () => {
    const sdf = buildSdf();
    expect(await pool.validate(sdf)).toEqual(await validate(sdf));
  });

  it('ends a catastrophic regex as a clear failure and keeps serving', async () => {
    const schema = {
      type: 'object',
      properties: { invoice_number: { type: 'string', pattern: '^(a+)+$' } },
    };
    const data = { ...invoiceData(), invoice_number: `${'a'.repeat(40)}!` };
    const result = await pool.validate(buildSdf({ schema, data }));
    expect(result.valid).toBe(false);
    expect(result.error?.code).toBe('SDF_ERROR_INVALID_SCHEMA');
    expect(result.error?.message).toMatch(/time budget/);
    expect(result.checks).toMatchObject({
      container: 'pass',
      meta: 'pass',
      schema: 'pass',
      data: 'fail',
      pdf: 'skipped',
    });
    // The worker was terminated and replaced; the pool and this process still answer.
    expect((await pool.validate(buildSdf())).valid).toBe(true);
  });

  it('ends a file built to exhaust memory as a failure, not a crash', async () => {
    const small = createValidationPool({ maxThreads: 1, timeoutMs: 10_000, maxOldGenerationSizeMb: 64 });
    try {
      // About 9 MB of JSON that parses into three million live objects: more than a 64 MB heap holds.
      const data = Buffer.from(`{"document_type":"invoice","items":[${'{},'.repeat(3_000_000)}{}]}`);
      const result = await small.validate(buildSdf({ entries: { 'data.json': data } }));
      expect(result.valid).toBe(false);
      // V8 either fails the allocation (memory budget) or collects in circles near the limit until the
      // time budget ends the worker; both are a clear failure of the data check, and the process lives on.
      expect(result.error?.message).toMatch(
        /the data check (exceeded the memory budget|did not finish within the time budget)/,
      );
      expect(result.checks.data).toBe('fail');
      expect((await small.validate(buildSdf())).valid).toBe(true);
    } finally {
      await small.destroy();
    }
  });
});
