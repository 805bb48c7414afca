import { describe, expect, it } from 'vitest';
import { SharedResult } from './readiness.js';

/** A run the test finishes by hand, so concurrency is explicit and no timer is involved. */
function controlledRun() {
  const pending: ((v: string) => void)[] = [];
  let calls = 0;
  const run = () => {
    calls++;
    return new Promise<string>((resolve) => pending.push(resolve));
  };
  return { run, calls: () => calls, finish: (v: string) => pending.shift()!(v) };
}

describe('SharedResult (readiness cache, S15)', () => {
  it('shares one run among concurrent callers and its result among later ones within the window', async () => {
    let clock = 0;
    const c = controlledRun();
    const shared = new SharedResult(c.run, 1000, () => clock);
    const concurrent = Array.from({ length: 50 }, () => shared.get());
    expect(c.calls()).toBe(1);
    c.finish('ok');
    expect(new Set(await Promise.all(concurrent))).toEqual(new Set(['ok']));
    clock = 999;
    for (let i = 0; i < 20; i++) expect(await shared.get()).toBe('ok');
    expect(c.calls()).toBe(1);
  });

  it('checks again once the window has passed, so a dependency gone down is reported within it', async () => {
    let clock = 0;
    const c = controlledRun();
    const shared = new SharedResult(c.run, 1000, () => clock);
    const first = shared.get();
    c.finish('ok');
    expect(await first).toBe('ok');
    clock = 1000;
    const second = shared.get();
    expect(c.calls()).toBe(2);
    c.finish('unavailable');
    expect(await second).toBe('unavailable');
    // A failure is cached as briefly as a success, then checked again.
    clock = 1999;
    expect(await shared.get()).toBe('unavailable');
    clock = 2000;
    const third = shared.get();
    expect(c.calls()).toBe(3);
    c.finish('ok');
    expect(await third).toBe('ok');
  });

  it('with a window of 0 checks on every call that does not meet one in flight', async () => {
    const c = controlledRun();
    const shared = new SharedResult(c.run, 0, () => 0);
    const a = shared.get();
    const b = shared.get();
    c.finish('x');
    expect(await Promise.all([a, b])).toEqual(['x', 'x']);
    const later = shared.get();
    expect(c.calls()).toBe(2);
    c.finish('y');
    expect(await later).toBe('y');
  });
});
