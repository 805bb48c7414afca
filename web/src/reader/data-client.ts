import { useEffect, useState } from 'react';
import type { DataNode, Fact, Page, Path } from './data-prepare.js';
import type { DataMessage, DataRequest } from './protocol.js';

/** Bytes copied per task when handing data.json over. */
const COPY_STEP = 2 * 1024 * 1024;

/** A copy of `bytes`, made `COPY_STEP` at a time with a return to the event loop between; null if stopped. */
async function copyInSteps(bytes: Uint8Array, stopped: () => boolean): Promise<ArrayBuffer | null> {
  const copy = new Uint8Array(bytes.length);
  for (let at = 0; at < bytes.length; at += COPY_STEP) {
    if (stopped()) return null;
    copy.set(bytes.subarray(at, at + COPY_STEP), at);
    if (at + COPY_STEP < bytes.length) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return stopped() ? null : copy.buffer;
}

/**
 * A data worker whose view was closed while it had nothing to do waits here for the next one: starting a
 * worker and ending it, on every file the reader opens, cost CPU that the next file's check was waiting
 * for. A worker still working (parsing a large data.json, answering) is ended instead.
 */
let idleWorker: Worker | null = null;

type Question = DataRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The page's side of the data worker: one per shown data.json, ended when the view goes. Every answer
 * is small (a page of children, the start of a string) except a Blob, which is passed by reference.
 */
export class DataClient {
  private readonly worker = takeWorker();
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private next = 1;
  private closed = false;
  /** The worker has answered `open` (ready or failed) and is not parsing. */
  private opened = false;
  readonly ready: Promise<{ root: DataNode; summary: Fact[] }>;

  /** `meta`: the file's parsed meta.json, whose issuer the summary names. */
  constructor(bytes: Uint8Array, meta: unknown) {
    this.ready = new Promise((resolve, reject) => {
      this.worker.onmessage = (event: MessageEvent<DataMessage>) => {
        const message = event.data;
        if ('id' in message) {
          const waiter = this.waiting.get(message.id);
          this.waiting.delete(message.id);
          if (message.ok) waiter?.resolve(message.value);
          else waiter?.reject(new Error(message.message));
        } else if (message.type === 'ready') {
          this.opened = true;
          resolve({ root: message.root, summary: message.summary });
        } else {
          this.opened = true;
          reject(new Error(message.message));
        }
      };
      // A worker that dies (out of memory) answers nothing more.
      this.worker.onerror = (event) => {
        event.preventDefault();
        const error = new Error('the data is more than this browser tab can hold');
        reject(error);
        for (const waiter of this.waiting.values()) waiter.reject(error);
        this.waiting.clear();
      };
    });
    // The worker gets a copy (the page keeps its own bytes for the Files tab), made a few MB at a time:
    // 40 MB copied at once held the page up for a fifth of a second on a busy machine.
    void copyInSteps(bytes, () => this.closed).then((copy) => {
      if (copy) this.worker.postMessage({ type: 'open', bytes: copy, meta } satisfies DataRequest, [copy]);
    });
  }

  private ask<T>(question: Question): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ ...question, id } as DataRequest);
    });
  }

  page(path: Path, offset: number, count: number): Promise<Page | undefined> {
    return this.ask({ type: 'page', path, offset, count });
  }

  text(path: Path, end: number): Promise<string | undefined> {
    return this.ask({ type: 'text', path, end });
  }

  /** The whole string at `path`, or the whole data as JSON (`null`). */
  blob(path: Path | null): Promise<Blob | undefined> {
    return this.ask({ type: 'blob', path });
  }

  json(limit: number): Promise<{ head: string; length: number }> {
    return this.ask({ type: 'json', limit });
  }

  close(): void {
    this.closed = true;
    this.worker.onmessage = null;
    this.worker.onerror = null;
    if (this.opened && this.waiting.size === 0 && !idleWorker) {
      this.worker.postMessage({ type: 'close' } satisfies DataRequest);
      idleWorker = this.worker;
    } else {
      this.worker.terminate();
    }
    const error = new Error('the data view was closed');
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}

function takeWorker(): Worker {
  const worker = idleWorker ?? new Worker(new URL('./data-worker.ts', import.meta.url), { type: 'module' });
  idleWorker = null;
  return worker;
}

export type PreparedData =
  | { kind: 'none' }
  | { kind: 'preparing' }
  | { kind: 'ready'; root: DataNode; summary: Fact[]; client: DataClient }
  | { kind: 'failed'; message: string };

/** data.json prepared in its worker for as long as the component showing it lives (`meta` as parsed once). */
export function usePreparedData(bytes: Uint8Array | undefined, meta: unknown): PreparedData {
  const [state, setState] = useState<PreparedData>({ kind: bytes ? 'preparing' : 'none' });
  useEffect(() => {
    if (!bytes) {
      setState({ kind: 'none' });
      return;
    }
    setState({ kind: 'preparing' });
    const client = new DataClient(bytes, meta);
    let live = true;
    client.ready.then(
      ({ root, summary }) => live && setState({ kind: 'ready', root, summary, client }),
      (error: Error) => live && setState({ kind: 'failed', message: error.message }),
    );
    return () => {
      live = false;
      client.close();
    };
  }, [bytes, meta]);
  return state;
}

/**
 * Puts a Blob's text on the clipboard. The Blob is handed over as a promise, so the click that asked
 * still counts as the user's gesture while the worker makes it, and this page never holds the text.
 */
export async function copyBlob(blob: Promise<Blob | undefined>): Promise<void> {
  const ready = blob.then((b) => b ?? Promise.reject(new Error('the value is gone')));
  if (typeof ClipboardItem !== 'undefined' && typeof navigator.clipboard?.write === 'function') {
    await navigator.clipboard.write([new ClipboardItem({ 'text/plain': ready })]);
  } else {
    await navigator.clipboard.writeText(await (await ready).text());
  }
}
