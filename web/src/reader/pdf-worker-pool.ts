/** What the pool needs of pdf.js's `PDFWorker`. */
export interface Destroyable {
  readonly destroyed: boolean;
  destroy(): void;
}

/** A worker as a document holds it: hand it back with `release` when the document is closed. */
export interface HeldWorker<W> {
  readonly worker: W;
  /** `busy`: the worker may still be working for the document (loading it, drawing a page). */
  release(busy: boolean): void;
}

/**
 * One pdf.js worker serves the PDFs a page shows, one after another. Starting a worker (pdf.js's 1 MB
 * script compiled in a new thread) and ending it cost about a third of a second of CPU per file on a
 * 2-core machine, and the ending ran beside the reader's check of the next file. A document closed while
 * the worker may still be busy with it retires the worker: later documents get a new one, and the retired
 * one ends once no document holds it, so a PDF that keeps pdf.js busy never holds up the next.
 */
export function workerPool<W extends Destroyable>(create: () => W): () => HeldWorker<W> {
  let current: { worker: W; holders: number; retired: boolean } | null = null;
  return () => {
    if (!current || current.retired || current.worker.destroyed) {
      current = { worker: create(), holders: 0, retired: false };
    }
    const entry = current;
    entry.holders++;
    let released = false;
    return {
      worker: entry.worker,
      release(busy: boolean): void {
        if (released) return;
        released = true;
        entry.holders--;
        if (busy) entry.retired = true;
        if (entry.retired && entry.holders === 0) entry.worker.destroy();
      },
    };
  };
}
