/** One message of a Server-Sent Events stream, as a client sees it. */
export interface SseMessage {
  /** The `id` field, if the message had one. */
  id?: string;
  /** The `event` field (`message` when absent). */
  event: string;
  data: string;
}

/**
 * A Server-Sent Events parser (the WHATWG event stream format): feed it the bytes as they arrive; it calls
 * `onMessage` for each complete message, `onComment` for each comment line (`: heartbeat`) and `onRetry` for
 * a `retry` field. A message cut off by a dropped connection is never delivered.
 */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
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
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      this.buffer = this.buffer.slice(nl + width);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0 || this.event !== '' || this.id !== undefined) {
        this.handlers.onMessage({
          ...(this.id !== undefined ? { id: this.id } : {}),
          event: this.event || 'message',
          data: this.data.join('\n'),
        });
      }
      this.id = undefined;
      this.event = '';
      this.data = [];
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
    if (field === 'id') this.id = value;
    else if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) this.handlers.onRetry?.(Number(value));
  }
}
