import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveStream, SseParser, staleQueries, type LiveStatus, type SseMessage } from './live.js';

function parse(chunks: string[]) {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const parser = new SseParser({
    onMessage: (m) => messages.push(m),
    onComment: (c) => comments.push(c),
    onRetry: (ms) => retries.push(ms),
  });
  for (const chunk of chunks) parser.push(chunk);
  return { messages, comments, retries };
}

describe('SseParser', () => {
  it('reads id, event and multi-line data, whatever the line ends and however the text is cut', () => {
    const text =
      'retry: 2000\r\n\r\n: heartbeat\n\nid: 7\nevent: document.validated\ndata: {"a":1,\ndata: "b":2}\n\n' +
      'id: 8\revent: document.signed\rdata: x\r\r' +
      'event: stream.restarted\r\ndata:{"resumed_from":"8"}\r\n\r\n';
    const whole = parse([text]);
    expect(whole.messages).toEqual([
      { id: '7', event: 'document.validated', data: '{"a":1,\n"b":2}' },
      { id: '8', event: 'document.signed', data: 'x' },
      // The last id stays the stream's until another replaces it.
      { id: '8', event: 'stream.restarted', data: '{"resumed_from":"8"}' },
    ]);
    expect(whole.comments).toEqual(['heartbeat']);
    expect(whole.retries).toEqual([2000]);
    // Cut at every position: the same messages (a CR at a cut may be half of a CRLF).
    for (let at = 1; at < text.length; at++) {
      expect(parse([text.slice(0, at), text.slice(at)]).messages).toEqual(whole.messages);
    }
    expect(parse(text.split('')).messages).toEqual(whole.messages);
  });

  it('delivers no message cut off before its blank line, and none without data', () => {
    expect(parse(['id: 1\nevent: document.signed\ndata: {}\n']).messages).toEqual([]);
    expect(parse(['id: 1\nevent: document.signed\n\n']).messages).toEqual([]);
    expect(parse(['data\n\n']).messages).toEqual([{ event: 'message', data: '' }]);
  });
});

/** A small SSE server on loopback: each request is handed to `handle`, in order. */
class SseServer {
  readonly requests: { lastEventId: string | undefined; authorization: string | undefined }[] = [];
  private readonly server: Server;
  private readonly open = new Set<ServerResponse>();
  closedByClient = 0;

  constructor(private readonly handle: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
    this.server = createServer((req, res) => {
      this.requests.push({
        lastEventId: req.headers['last-event-id'] as string | undefined,
        authorization: req.headers.authorization,
      });
      this.open.add(res);
      res.on('close', () => {
        if (!res.writableEnded) this.closedByClient += 1;
        this.open.delete(res);
      });
      this.handle(this.requests.length, req, res);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const streamHead = (res: ServerResponse) =>
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
const frame = (id: number, event: string, documentId: string) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify({ id: `e${id}`, event, data: { id: documentId } })}\n\n`;

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = read();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never: ${what}`);
}

describe('LiveStream against a real event stream on loopback', () => {
  let server: SseServer | undefined;
  let stream: LiveStream | undefined;
  afterEach(async () => {
    await stream?.stop();
    await server?.close();
    stream = undefined;
    server = undefined;
  });

  function follow(url: string, extra: { silenceMs?: number } = {}) {
    const messages: SseMessage[] = [];
    const statuses: { status: LiveStatus; resumed: boolean; retryInMs?: number }[] = [];
    stream = new LiveStream({
      open: (lastEventId, signal) =>
        fetch(url, {
          signal,
          headers: {
            Authorization: 'Bearer page-token',
            ...(lastEventId !== undefined ? { 'Last-Event-ID': lastEventId } : {}),
          },
        }),
      onMessage: (m) => messages.push(m),
      onStatus: (status, info) => statuses.push({ status, ...info }),
      delayMs: () => 5,
      ...extra,
    });
    stream.start();
    return { messages, statuses };
  }

  it('reconnects after a drop and resumes exactly after the last event seen: none lost, none repeated', async () => {
    server = new SseServer((n, _req, res) => {
      streamHead(res);
      if (n === 1) {
        res.write('retry: 20\n\n');
        res.write(frame(1, 'document.uploaded', 'doc-1'));
        // The second event is cut before its blank line: it was never delivered, so it is sent again.
        res.end(frame(2, 'document.validated', 'doc-1') + frame(3, 'document.signed', 'doc-1').slice(0, 30));
      } else if (n === 2) {
        res.write(': heartbeat\n\n');
        res.end(frame(3, 'document.signed', 'doc-1'));
      } else {
        res.write(frame(4, 'document.deleted', 'doc-1'));
      }
    });
    const { messages, statuses } = follow(await server.start());
    await until(() => messages.length >= 4 || undefined, 'four events');
    expect(messages.map((m) => [m.id, m.event])).toEqual([
      ['1', 'document.uploaded'],
      ['2', 'document.validated'],
      ['3', 'document.signed'],
      ['4', 'document.deleted'],
    ]);
    expect(server.requests.map((r) => r.lastEventId)).toEqual([undefined, '2', '3']);
    expect(server.requests.every((r) => r.authorization === 'Bearer page-token')).toBe(true);
    expect(statuses.slice(0, 5)).toEqual([
      { status: 'connecting', resumed: false },
      { status: 'open', resumed: false },
      { status: 'connecting', resumed: false },
      { status: 'open', resumed: true },
      { status: 'connecting', resumed: false },
    ]);
    expect(stream?.lastId).toBe('4');
  });

  it('is down while refused (429, 503, not a stream), honours Retry-After, and opens once the server answers', async () => {
    const refusals = [
      (res: ServerResponse) => res.writeHead(503, { 'Retry-After': '1' }).end('{"error":{}}'),
      (res: ServerResponse) => res.writeHead(429).end('{"error":{}}'),
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'),
    ];
    server = new SseServer((n, _req, res) => {
      if (n <= refusals.length) return refusals[n - 1](res);
      streamHead(res);
      res.write(frame(9, 'document.validated', 'doc-9'));
    });
    const { messages, statuses } = follow(await server.start());
    await until(() => messages.length === 1 || undefined, 'the event after the refusals');
    expect(statuses).toEqual([
      { status: 'connecting', resumed: false },
      // The 503's Retry-After (one second) is waited for before the next attempt, not the 5 ms backoff.
      { status: 'down', resumed: false, retryInMs: 1000 },
      { status: 'down', resumed: false, retryInMs: 5 },
      { status: 'down', resumed: false, retryInMs: 5 },
      { status: 'open', resumed: false },
    ]);
    expect(server.requests).toHaveLength(4);
  });

  it('takes a silent stream (no event, no heartbeat) for dead and opens it again', async () => {
    server = new SseServer((n, _req, res) => {
      streamHead(res);
      if (n === 1) res.write(frame(5, 'document.validated', 'doc-5'));
      else res.write(': heartbeat\n\n');
    });
    const { statuses } = follow(await server.start(), { silenceMs: 200 });
    await until(() => server!.requests.length >= 2 || undefined, 'a second connection');
    expect(server.requests[1].lastEventId).toBe('5');
    // The server sees the request before the client has its answer: wait for the client to call it open.
    await until(() => statuses.length >= 4 || undefined, 'the second stream open');
    expect(statuses.map((s) => s.status).slice(0, 4)).toEqual(['connecting', 'open', 'connecting', 'open']);
  });

  it('stop() closes the connection and opens no other', async () => {
    server = new SseServer((_n, _req, res) => {
      streamHead(res);
      res.write(': heartbeat\n\n');
    });
    const { statuses } = follow(await server.start());
    await until(() => statuses.some((s) => s.status === 'open') || undefined, 'open');
    await stream!.stop();
    await until(() => server!.closedByClient === 1 || undefined, 'the server sees the client leave');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests).toHaveLength(1);
  });
});

describe('staleQueries', () => {
  const message = (event: string, id = 'doc-1'): SseMessage => ({
    id: '1',
    event,
    data: JSON.stringify({ id: 'evt', event, data: { id } }),
  });

  it("refreshes a document's record, the list and usage; an upload only the list and usage", () => {
    expect(staleQueries(message('document.validated'))).toEqual([['documents'], ['usage'], ['document', 'doc-1']]);
    expect(staleQueries(message('document.signed'))).toEqual([['documents'], ['usage'], ['document', 'doc-1']]);
    expect(staleQueries(message('document.uploaded'))).toEqual([['documents'], ['usage']]);
    // A failed signing changes the record alone; a finished ERP push, the document's pushes alone.
    expect(staleQueries(message('document.signing_failed'))).toEqual([['document', 'doc-1']]);
    expect(staleQueries(message('document.erp_pushed'))).toEqual([['erp-status', 'doc-1']]);
    expect(staleQueries({ event: 'document.erp_pushed', data: 'not json' })).toEqual([]);
  });

  it('refreshes everything after a restart of the stream, nothing for an unknown event or a body that is not JSON', () => {
    expect(staleQueries({ event: 'stream.restarted', data: '{}' })).toEqual([
      ['document'],
      ['documents'],
      ['erp-status'],
      ['usage'],
    ]);
    expect(staleQueries({ event: 'message', data: 'hello' })).toEqual([]);
    expect(staleQueries({ event: 'document.signed', data: 'not json' })).toEqual([['documents'], ['usage']]);
  });
});
