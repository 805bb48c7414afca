import { open } from 'node:fs/promises';

/**
 * fsync of folders, shared between callers. A rename is durable once an fsync of its folder has
 * *started* after it; so a caller whose rename is done may join the next fsync of that folder, but
 * never one already running (it may have read the folder before the rename). While one fsync of a
 * folder runs, every caller that arrives waits for the single next one: under load, many uploads into
 * one tenant's folder cost one or two folder fsyncs instead of one each.
 */
export class FolderSync {
  /** The fsync running now, per folder. */
  private readonly running = new Map<string, Promise<void>>();
  /** The fsync that starts when the running one ends, per folder: the one newcomers join. */
  private readonly next = new Map<string, Promise<void>>();

  constructor(private readonly fsyncFolder: (folder: string) => Promise<void> = fsyncPath) {}

  /** Resolves once an fsync of `folder` that started after this call has finished. */
  sync(folder: string): Promise<void> {
    const queued = this.next.get(folder);
    if (queued) return queued;
    const running = this.running.get(folder);
    const start = (): Promise<void> => {
      this.next.delete(folder);
      const sync = this.fsyncFolder(folder);
      this.running.set(folder, sync);
      const clear = () => {
        if (this.running.get(folder) === sync) this.running.delete(folder);
      };
      sync.then(clear, clear);
      return sync;
    };
    if (!running) return start();
    // Starts once the running one has ended, however it ended.
    const queuedSync = running.then(start, start);
    this.next.set(folder, queuedSync);
    return queuedSync;
  }
}

async function fsyncPath(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
