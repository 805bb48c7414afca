import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
  /** The HTML part, or null for a text-only mail. */
  html: string | null;
  /** The top-level Content-Type without parameters, e.g. `multipart/alternative`. */
  contentType: string;
  received: Date;
}

export interface SmtpSink {
  url: string;
  mails: ReceivedMail[];
  /** Holds every new transaction at MAIL FROM until `release()`: a mail server that does not answer. */
  stall: () => void;
  release: () => void;
  /** How many transactions are waiting at MAIL FROM right now. */
  stalled: () => number;
  close: () => Promise<void>;
}

/** A real SMTP server on loopback (the `smtp-server` package) that keeps what it receives. */
export async function startSmtpSink(options: { port?: number } = {}): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  let waiting = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      if (!gate) return callback();
      waiting++;
      void gate.then(() => {
        waiting--;
        callback();
      });
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const to = Array.isArray(parsed.to) ? parsed.to[0] : parsed.to;
          mails.push({
            to: to?.value[0]?.address ?? '',
            from: parsed.from?.value[0]?.address ?? '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : null,
            contentType: contentTypeOf(parsed.headers.get('content-type')),
            received: new Date(),
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve, reject) => {
    // smtp-server passes its socket's errors (EADDRINUSE) on as its own 'error': unheard, it ends the process.
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    stall: () => {
      gate ??= new Promise<void>((resolve) => (open = resolve));
    },
    release: () => {
      open?.();
      gate = null;
      open = null;
    },
    stalled: () => waiting,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The `token` query parameter of the first link in a mail. */
export function tokenFromMail(mail: ReceivedMail): string {
  const link = /https?:\/\/\S+/.exec(mail.text)?.[0];
  if (!link) throw new Error('no link in mail: ' + mail.text);
  const token = new URL(link).searchParams.get('token');
  if (!token) throw new Error('no token in link: ' + link);
  return token;
}

/** mailparser gives Content-Type as `{ value, params }`. */
function contentTypeOf(header: unknown): string {
  if (typeof header === 'string') return header.split(';')[0]!.trim().toLowerCase();
  const value = (header as { value?: unknown } | undefined)?.value;
  return typeof value === 'string' ? value.toLowerCase() : '';
}
