import { describe, expect, it } from 'vitest';
import { workerPool } from './pdf-worker-pool.js';

class FakeWorker {
  static made = 0;
  readonly id = ++FakeWorker.made;
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
  }
}

describe('the pdf.js worker pool', () => {
  it('hands the same worker to one document after another while each is closed idle', () => {
    const take = workerPool(() => new FakeWorker());
    const first = take();
    first.release(false);
    const second = take();
    expect(second.worker).toBe(first.worker);
    second.release(false);
    expect(first.worker.destroyed).toBe(false);
  });

  it('ends a worker closed busy, and gives the next document a new one', () => {
    const take = workerPool(() => new FakeWorker());
    const first = take();
    first.release(true);
    expect(first.worker.destroyed).toBe(true);
    const second = take();
    expect(second.worker).not.toBe(first.worker);
    expect(second.worker.destroyed).toBe(false);
  });

  it('keeps a retired worker until the last document holding it is closed', () => {
    const take = workerPool(() => new FakeWorker());
    const a = take();
    const b = take();
    expect(b.worker).toBe(a.worker);
    a.release(true);
    expect(a.worker.destroyed).toBe(false);
    const c = take();
    expect(c.worker).not.toBe(a.worker);
    b.release(false);
    expect(a.worker.destroyed).toBe(true);
    expect(c.worker.destroyed).toBe(false);
  });

  it('counts a document once however often it is released', () => {
    const take = workerPool(() => new FakeWorker());
    const a = take();
    const b = take();
    a.release(true);
    a.release(true);
    expect(a.worker.destroyed).toBe(false);
    b.release(false);
    expect(a.worker.destroyed).toBe(true);
  });

  it('replaces a worker pdf.js ended by itself', () => {
    const take = workerPool(() => new FakeWorker());
    const a = take();
    a.release(false);
    a.worker.destroy();
    expect(take().worker).not.toBe(a.worker);
  });
});
