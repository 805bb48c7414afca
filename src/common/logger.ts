import type { LoggerService, LogLevel } from '@nestjs/common';
import { requestContext } from './request-context.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogThreshold = keyof typeof LEVELS;

/**
 * Structured JSON logs, one object a line, with request id and tenant id from the request context.
 * Callers pass facts, never credentials: no header, token, key or secret is ever handed to a logger.
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly threshold: LogThreshold = 'info',
    private readonly out: (line: string) => void = (line) => process.stdout.write(line + '\n'),
  ) {}

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

  private write(level: Exclude<LogThreshold, 'silent'>, message: unknown, rest: unknown[]): void {
    if (LEVELS[level] < LEVELS[this.threshold]) return;
    // Nest passes the context name last; an Error or an object of fields may come before it.
    const args = [...rest];
    const context = typeof args.at(-1) === 'string' ? (args.pop() as string) : undefined;
    const line: Record<string, unknown> = { level, time: new Date().toISOString() };
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
    this.out(JSON.stringify(line));
  }
}
