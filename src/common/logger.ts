import type { LoggerService, LogLevel } from '@nestjs/common';
import { pino, type Logger as Pino } from 'pino';
import { requestContext } from './request-context.js';

export type LogThreshold = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const CENSOR = '[redacted]';

/**
 * Fields never written, wherever they appear in a log object (pino's path redaction): request headers
 * that carry credentials, and the names under which keys and secrets travel in this code base.
 */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  '*.authorization',
  '*.cookie',
  '*["x-api-key"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
  ...['secret', 'password', 'token', 'key', 'api_key', 'private_key', 'private_key_enc', 'master_key'].flatMap((f) => [
    f,
    `*.${f}`,
  ]),
  'jwt_secret',
  'admin_jwt_secret',
];

/**
 * Second line of defence, on the serialised line: credentials that reached a log under some other
 * name (an error message quoting a header, say) are masked by their shape.
 */
const CREDENTIAL_SHAPES: [RegExp, string][] = [
  [/sdf_k[A-Za-z0-9_-]{8,}/g, `sdf_k${CENSOR}`],
  [/eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+/g, CENSOR],
  [/(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${CENSOR}`],
];

export function scrubCredentials(line: string): string {
  let out = line;
  for (const [shape, replacement] of CREDENTIAL_SHAPES) out = out.replace(shape, replacement);
  return out;
}

/** The process's pino logger: JSON lines, level names, ISO times, redaction on. */
export function createPino(
  level: LogThreshold = 'info',
  out: (line: string) => void = (line) => process.stdout.write(line + '\n'),
): Pino {
  return pino(
    {
      level,
      base: undefined,
      messageKey: 'msg',
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      hooks: { streamWrite: scrubCredentials },
    },
    { write: (chunk: string) => out(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) },
  );
}

/**
 * Nest's logger interface over pino, with request id and tenant id from the request context.
 * Callers pass facts, never credentials; redaction catches the ones that slip through.
 */
export class JsonLogger implements LoggerService {
  readonly pino: Pino;

  constructor(threshold: LogThreshold = 'info', out?: (line: string) => void) {
    this.pino = createPino(threshold, out);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  setLogLevels(_levels: LogLevel[]): void {}

  private write(level: 'debug' | 'info' | 'warn' | 'error', message: unknown, rest: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    // Nest passes the context name last; an Error or an object of fields may come before it.
    const args = [...rest];
    const context = typeof args.at(-1) === 'string' ? (args.pop() as string) : undefined;
    const line: Record<string, unknown> = {};
    if (context) line.context = context;
    const ctx = requestContext.get();
    if (ctx) {
      line.request_id = ctx.requestId;
      if (ctx.tenantId) line.tenant_id = ctx.tenantId;
    }
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) Object.assign(line, message);
    else line.msg = message instanceof Error ? message.message : String(message);
    for (const extra of args) {
      if (extra instanceof Error) line.err = { name: extra.name, message: extra.message, stack: extra.stack };
      else if (typeof extra === 'string') line.stack = extra;
      else if (extra && typeof extra === 'object') Object.assign(line, extra);
    }
    this.pino[level](line);
  }
}
