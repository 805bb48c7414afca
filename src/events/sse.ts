/** One message of a Server-Sent Events stream, as a client sees it. */
export interface SseMessage {
  /** The last `id` field seen on the stream, if any. */
  id?: string;
  /** The `event` field (`message` when absent). */
  event: string;
  data: string;
}

/**
 * A Server-Sent Events parser (the WHATWG event stream format), for the command line, the tests and the
 * pages alike: feed it the bytes or text as they arrive; it calls `onMessage` for each complete message
 * (delivered at its blank line, so one cut off by a dropped connection is never delivered), `onComment`
 * for each comment line (`: heartbeat`) and `onRetry` for a `retry` field. Lines end in CRLF, LF or CR; a
 * CR at the end of a chunk waits for the next one (it may be half of a CRLF).
 */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly handlers: {
      onMessage: (message: SseMessage) => void;
      onComment?: (text: string) => void;
      onRetry?: (ms: number) => void;
    },
  ) {}

  push(chunk: Uint8Array | string): void {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = this.buffer.search(/[\r\n]/);
      if (end < 0) return;
      if (this.buffer[end] === '\r' && end === this.buffer.length - 1) return;
      const width = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + width);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.hasData) {
        this.handlers.onMessage({
          ...(this.id !== undefined ? { id: this.id } : {}),
          event: this.event || 'message',
          data: this.data.join('\n'),
        });
      }
      this.event = '';
      this.data = [];
      this.hasData = false;
      return;
    }
    if (line.startsWith(':')) {
      this.handlers.onComment?.(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'event') this.event = value;
    // The last id seen stays the stream's until another replaces it (the format's rule).
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.handlers.onRetry?.(Number(value));
  }
}
