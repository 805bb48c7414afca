import type { Command } from 'commander';
import { SseParser, type SseMessage } from '../events/sse.js';
import { CliRefusal } from './admin-commands.js';
import { CliUsageError } from './format-commands.js';

/** The first wait after a drop, unless the service said otherwise (`retry:`); doubled up to the cap. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** Nothing at all (not even a heartbeat) for this long: the connection is taken for dead and re-made. */
const SILENCE_MS = 60_000;

export interface WatchOptions {
  url: string;
  apiKey: string;
  type?: string;
  document?: string;
  lastEventId?: string;
}

interface EventBody {
  timestamp?: string;
  document_id?: string;
  data?: { id?: string; status?: string };
  reason?: string;
  resumed_from?: number;
}

/** One line an event: its time, type, the document's id (the record's, as the API's paths take) and status. */
export function eventLine(message: SseMessage): string {
  let body: EventBody = {};
  try {
    body = JSON.parse(message.data) as EventBody;
  } catch {
    // Not JSON: printed with what is known.
  }
  if (message.event === 'stream.restarted') {
    return `${new Date().toISOString()}  stream.restarted  resumed after ${body.resumed_from ?? '?'}: ${body.reason ?? ''}`;
  }
  return [
    body.timestamp ?? new Date().toISOString(),
    message.event,
    body.data?.id ?? body.document_id ?? '-',
    body.data?.status ?? '-',
  ].join('  ');
}

/** `sdf watch`: the tenant's document events as they come, reconnecting with backoff and resuming. */
export function registerWatchCommand(program: Command): void {
  program
    .command('watch')
    .description(
      "Print the tenant's document events as they come (GET /events), one line each; reconnects after a drop " +
        'and resumes after the last event printed',
    )
    .requiredOption('--url <url>', 'the service, e.g. https://sdf.example.com (managed: https://…/v1)')
    .requiredOption('--api-key <key>', 'an API key of the tenant (or set SDF_API_KEY)', process.env.SDF_API_KEY)
    .option('--type <types>', 'only these event types, comma-separated (e.g. document.validated,document.signed)')
    .option('--document <id>', "only this document's events (its id)")
    .option('--last-event-id <id>', 'start after this event id rather than with new events')
    .action(async (opts: WatchOptions) => {
      await watch(
        opts,
        (line) => process.stdout.write(line + '\n'),
        (line) => process.stderr.write(line + '\n'),
      );
    });
}

export async function watch(opts: WatchOptions, out: (line: string) => void, err: (line: string) => void) {
  let base: URL;
  try {
    base = new URL(opts.url.endsWith('/') ? opts.url : `${opts.url}/`);
  } catch {
    throw new CliUsageError(`--url is not a URL: ${opts.url}`);
  }
  const url = new URL('events', base);
  if (opts.type) url.searchParams.set('types', opts.type);
  if (opts.document) url.searchParams.set('document', opts.document);
  let lastId = opts.lastEventId;
  let retryMs = FIRST_BACKOFF_MS;
  let backoff = retryMs;
  for (;;) {
    let delivered = false;
    let waitMs: number | undefined;
    const controller = new AbortController();
    let silence: NodeJS.Timeout | undefined;
    const quiet = () => {
      clearTimeout(silence);
      silence = setTimeout(() => controller.abort(), SILENCE_MS);
    };
    try {
      quiet();
      const res = await fetch(url, {
        headers: {
          Accept: 'text/event-stream',
          'X-API-Key': opts.apiKey,
          ...(lastId !== undefined ? { 'Last-Event-ID': lastId } : {}),
        },
        signal: controller.signal,
      });
      if (res.status === 400) throw new CliUsageError(await problem(res));
      if (res.status === 401 || res.status === 403 || res.status === 404) throw new CliRefusal(await problem(res));
      if (res.status === 429) {
        const after = Number(res.headers.get('retry-after'));
        waitMs = Number.isFinite(after) && after > 0 ? after * 1000 : undefined;
        err(`sdf watch: ${await problem(res)}`);
      } else if (res.status !== 200 || !res.body) {
        err(`sdf watch: the service answered ${res.status}`);
      } else {
        if (lastId !== undefined) err(`sdf watch: connected; resuming after event ${lastId}`);
        else err('sdf watch: connected');
        backoff = retryMs;
        const parser = new SseParser({
          onMessage: (m) => {
            if (m.id !== undefined) lastId = m.id;
            delivered = true;
            out(eventLine(m));
          },
          onRetry: (ms) => {
            retryMs = ms;
            backoff = ms;
          },
        });
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          quiet();
          parser.push(chunk);
        }
        err('sdf watch: the stream ended');
      }
    } catch (e) {
      if (e instanceof CliUsageError || e instanceof CliRefusal) throw e;
      err(`sdf watch: connection lost (${(e as Error).message})`);
    } finally {
      clearTimeout(silence);
    }
    const wait = waitMs ?? backoff;
    err(`sdf watch: reconnecting in ${(wait / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, wait));
    backoff = delivered ? retryMs : Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

async function problem(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: string; details?: { path: string; message: string }[] } };
    const details = (body.error?.details ?? []).map((d) => `${d.path}: ${d.message}`).join('; ');
    return `${res.status} ${body.error?.message ?? ''}${details ? ` (${details})` : ''}`;
  } catch {
    return `${res.status} ${text.slice(0, 200)}`;
  }
}
