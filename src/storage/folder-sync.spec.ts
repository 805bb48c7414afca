import { describe, expect, it } from 'vitest';
import { FolderSync } from './folder-sync.js';

/** An fsync stand-in whose calls are recorded and finish when the test says. */
function controlledFsync() {
  const calls: { folder: string; finish: (error?: Error) => void }[] = [];
  const fsync = (folder: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ folder, finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { calls, fsync };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FolderSync', () => {
  it('never lets a caller ride an fsync that was already running when it asked', async () => {
    const { calls, fsync } = controlledFsync();
    const folders = new FolderSync(fsync);
    let firstDone = false;
    let secondDone = false;
    void folders.sync('/d').then(() => (firstDone = true));
    expect(calls).toHaveLength(1);
    // Arrives while the first fsync runs: it must wait for a second one.
    void folders.sync('/d').then(() => (secondDone = true));
    expect(calls).toHaveLength(1);
    calls[0]!.finish();
    await tick();
    expect(firstDone).toBe(true);
    expect(secondDone).toBe(false);
    expect(calls).toHaveLength(2);
    calls[1]!.finish();
    await tick();
    expect(secondDone).toBe(true);
  });

  it('lets every caller that arrives during one fsync share the single next one', async () => {
    const { calls, fsync } = controlledFsync();
    const folders = new FolderSync(fsync);
    const first = folders.sync('/d');
    const waiting = [folders.sync('/d'), folders.sync('/d'), folders.sync('/d')];
    calls[0]!.finish();
    await first;
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.finish();
    await Promise.all(waiting);
    expect(calls).toHaveLength(2);
    // Nothing running now: the next caller starts its own at once.
    void folders.sync('/d');
    expect(calls).toHaveLength(3);
  });

  it('keeps folders apart and passes a failed fsync to its callers only', async () => {
    const { calls, fsync } = controlledFsync();
    const folders = new FolderSync(fsync);
    const a = folders.sync('/a');
    const b = folders.sync('/b');
    expect(calls.map((c) => c.folder)).toEqual(['/a', '/b']);
    const aAgain = folders.sync('/a');
    calls[0]!.finish(new Error('EIO'));
    await expect(a).rejects.toThrow('EIO');
    await tick();
    // The caller that waited gets an fsync of its own, which succeeds.
    expect(calls.map((c) => c.folder)).toEqual(['/a', '/b', '/a']);
    calls[2]!.finish();
    await expect(aAgain).resolves.toBeUndefined();
    calls[1]!.finish();
    await expect(b).resolves.toBeUndefined();
  });

  it('fsyncs a real folder', async () => {
    await expect(new FolderSync().sync('.')).resolves.toBeUndefined();
  });
});
