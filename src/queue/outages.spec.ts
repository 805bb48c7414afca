import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReadinessChecks } from '../common/readiness.js';
import type { AppConfig } from '../config/app-config.js';
import { BackgroundOutages } from './outages.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('BackgroundOutages', () => {
  let said: { level: string; line: Record<string, unknown> }[];
  let databaseUp: boolean;
  let outages: BackgroundOutages;

  beforeEach(() => {
    vi.useFakeTimers();
    said = [];
    for (const level of ['log', 'warn', 'error'] as const)
      vi.spyOn(Logger.prototype, level).mockImplementation((line: unknown) => {
        said.push({ level, line: line as Record<string, unknown> });
      });
    databaseUp = true;
    const readiness = new ReadinessChecks({ env: { READINESS_CACHE_MS: 0 } } as AppConfig);
    readiness.register('database', () => (databaseUp ? Promise.resolve() : Promise.reject(refused())));
    readiness.register('redis', () => Promise.resolve());
    outages = new BackgroundOutages(readiness);
  });
  afterEach(() => {
    outages.onApplicationShutdown();
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('says an outage once when it starts, with every task that met it, and once when it ends', async () => {
    databaseUp = false;
    for (let s = 0; s < 60; s++) {
      expect(outages.failed('outbox dispatch', refused())).toBe(true);
      if (s % 2 === 0) expect(outages.failed('outbox listener', refused())).toBe(true);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    databaseUp = true;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(said).toHaveLength(2);
    expect(said[0]).toMatchObject({
      level: 'warn',
      line: { unavailable: ['database'], affected: ['outbox dispatch', 'outbox listener'] },
    });
    expect(said[1]).toMatchObject({ level: 'log', line: { unavailable: ['database'], failed_rounds: 90 } });
    expect(said[1]!.line.outage_ms).toBeGreaterThanOrEqual(60_000);
  });

  it("leaves a task's own fault to the task", () => {
    expect(outages.failed('pending sweep', new Error('duplicate key value violates unique constraint'))).toBe(false);
    expect(said).toEqual([]);
  });

  it("says a failure that no probe explains as the task's own, at most once a minute", async () => {
    for (let s = 0; s < 120; s++) {
      outages.failed('orphan sweep', refused());
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(said.map((s) => s.level)).toEqual(['warn', 'warn']);
    expect(said[0]!.line).toMatchObject({ affected: ['orphan sweep'] });
  });

  it('says nothing more for a round that fails just after the outage was said to end, but does for one later', async () => {
    databaseUp = false;
    outages.failed('outbox dispatch', refused());
    await vi.advanceTimersByTimeAsync(10_000);
    databaseUp = true;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(said.map((s) => s.level)).toEqual(['warn', 'log']);
    // A connection attempt begun while the server was starting up fails after the end was said.
    outages.failed('outbox listener', refused());
    await vi.advanceTimersByTimeAsync(5_000);
    expect(said.map((s) => s.level)).toEqual(['warn', 'log']);
    // Long after the end, a failure that no probe explains is said again.
    await vi.advanceTimersByTimeAsync(60_000);
    outages.failed('outbox listener', refused());
    await vi.advanceTimersByTimeAsync(5_000);
    expect(said.map((s) => s.level)).toEqual(['warn', 'log', 'warn']);
  });
});
