/// <reference lib="webworker" />
// The Buffer adapter first: the format core (the summary) expects Node's Buffer as a global.
import '../shims/buffer.js';
import { preparePage, prepareRoot, resolve, type Json } from './data-prepare.js';
import { summaryOf } from './data-summary.js';
import type { DataMessage, DataRequest } from './protocol.js';

/**
 * The data view's worker: parses data.json, keeps it, and answers the page's questions about it, so a
 * file of any shape (a 40 MB string, 200,000 keys) never costs the page more than a bounded picture.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
const post = (message: DataMessage): void => scope.postMessage(message);

let data: Json = null;
let json: string | null = null;

/** The data as indented JSON, made once when first asked for. */
const indented = (): string => (json ??= JSON.stringify(data, null, 2));

function answer(request: Exclude<DataRequest, { type: 'open' | 'close' }>): unknown {
  switch (request.type) {
    case 'page':
      return preparePage(data, request.path, request.offset, request.count);
    case 'text': {
      const value = resolve(data, request.path)?.value;
      return typeof value === 'string' ? value.slice(0, request.end) : undefined;
    }
    case 'blob': {
      if (request.path === null) return new Blob([indented()], { type: 'application/json' });
      const value = resolve(data, request.path)?.value;
      return typeof value === 'string' ? new Blob([value], { type: 'text/plain' }) : undefined;
    }
    case 'json': {
      const text = indented();
      return { head: text.slice(0, request.limit), length: text.length };
    }
  }
}

scope.onmessage = (event: MessageEvent<DataRequest>) => {
  const request = event.data;
  if (request.type === 'close') {
    data = null;
    json = null;
    return;
  }
  if (request.type === 'open') {
    try {
      data = JSON.parse(new TextDecoder().decode(request.bytes)) as Json;
      post({ type: 'ready', root: prepareRoot(data), summary: summaryOf(data, request.meta) });
    } catch (error) {
      post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    }
    return;
  }
  try {
    post({ id: request.id, ok: true, value: answer(request) });
  } catch (error) {
    post({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
};
