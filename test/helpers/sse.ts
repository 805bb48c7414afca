import http, { type IncomingMessage } from 'node:http';
import { SseParser, type SseMessage } from '../../src/events/sse.js';

/**
 * A client of GET /events over plain node:http (as an integrator's would be): keeps every message and
 * comment, can stop reading (pause) and be cut.
 */
export class StreamClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  retry: number | undefined;
  body = '';
  readonly ended: Promise<void>;
  private res!: IncomingMessage;
  private req!: http.ClientRequest;
  private endedResolve!: () => void;

  private constructor(readonly status: number) {
    this.ended = new Promise((resolve) => (this.endedResolve = resolve));
  }

  /** Opens the stream; resolves once the answer's headers arrived (any status). */
  static open(url: string, headers: Record<string, string>): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        const client = new StreamClient(res.statusCode ?? 0);
        client.res = res;
        client.req = req;
        const parser = new SseParser({
          onMessage: (m) => client.messages.push(m),
          onComment: (c) => client.comments.push(c),
          onRetry: (ms) => (client.retry = ms),
        });
        res.on('data', (chunk: Buffer) => {
          if (client.status !== 200) client.body += chunk.toString();
          else parser.push(chunk);
        });
        const done = () => client.endedResolve();
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
        resolve(client);
      });
      req.on('error', reject);
    });
  }

  get headers(): http.IncomingHttpHeaders {
    return this.res.headers;
  }

  /** The messages that are events of the service (not stream.restarted). */
  events(): SseMessage[] {
    return this.messages.filter((m) => m.event.startsWith('document.'));
  }

  get lastId(): string | undefined {
    return this.messages.at(-1)?.id;
  }

  /** Resolves once `predicate` holds over what arrived; fails after `timeoutMs` or when the stream ends first. */
  async until(predicate: (c: StreamClient) => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    let ended = false;
    void this.ended.then(() => (ended = true));
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (ended) throw new Error(`the stream ended before ${what} (${this.messages.length} messages)`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${this.messages.length} messages)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops reading: the server's writes pile up in the socket buffers and then in its own. */
  pause(): void {
    this.res.pause();
  }

  close(): Promise<void> {
    this.req.destroy();
    return this.ended;
  }
}
