import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppError, errorBody, type ErrorDetail } from './errors.js';
import { DiskOutages } from './disk-outages.js';
import { diskFault, isInfrastructureError } from './infrastructure-errors.js';

/** An outage is logged at most once in this long, however many requests meet it (no stack floods). */
const OUTAGE_LOG_INTERVAL_MS = 10_000;
/** What a client is told to wait when a dependency is unreachable. */
const OUTAGE_RETRY_AFTER_SECONDS = 5;
/** What a client is told to wait when the disk is full or read-only: freeing space takes an operator. */
const DISK_RETRY_AFTER_SECONDS = 30;

const STATUS_CODES: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'VALIDATION_ERROR',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

interface SdfLikeError {
  code: string;
  message: string;
  file?: string;
  details?: ErrorDetail[];
}

/**
 * S5: every error leaves the service as `{error: {code, message, details}}`; unknown failures are
 * a bare 500 INTERNAL_ERROR with the cause logged, never sent.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');
  private lastOutageLog = 0;
  private unloggedOutageErrors = 0;

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, body, headers } = this.describe(exception);
    const fault = status === 507 || (status === 503 && !(exception instanceof AppError)) ? diskFault(exception) : null;
    // A full or unwritable disk: one line when the episode begins, one when a write succeeds again.
    if (fault) DiskOutages.shared.met(fault, exception);
    else if (status === 503 && isInfrastructureError(exception)) this.logOutage(exception);
    else if (status >= 500) this.logger.error('request failed', exception instanceof Error ? exception : undefined);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(status).json(body);
  }

  describe(exception: unknown): { status: number; body: object; headers: Record<string, string> } {
    if (exception instanceof AppError) {
      return {
        status: exception.status,
        body: errorBody(exception.code, exception.message, exception.details),
        headers: exception.headers,
      };
    }
    if (isSdfError(exception)) {
      // F3: a format failure of an uploaded file is 422 with the SDF code and its details.
      return {
        status: HttpStatus.UNPROCESSABLE_ENTITY,
        body: errorBody(exception.code, exception.message, exception.details ?? [], exception.file),
        headers: {},
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = STATUS_CODES[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');
      const message = status >= 500 ? 'Internal server error' : httpMessage(exception);
      return { status, body: errorBody(code, message), headers: {} };
    }
    const parser = exception as BodyParserError;
    if (parser && typeof parser === 'object' && typeof parser.type === 'string' && parser.expose) {
      // body-parser errors: malformed JSON (400), oversized body (413), bad charset (415).
      if (parser.type === 'entity.too.large') {
        return { status: 413, body: errorBody('PAYLOAD_TOO_LARGE', 'Request body is too large'), headers: {} };
      }
      if (parser.type === 'entity.too.deep') {
        return { status: 400, body: errorBody('VALIDATION_ERROR', (exception as Error).message), headers: {} };
      }
      if (parser.type === 'entity.parse.failed') {
        return { status: 400, body: errorBody('VALIDATION_ERROR', 'Request body is not valid JSON'), headers: {} };
      }
      const status = parser.status && parser.status < 500 ? parser.status : 400;
      return {
        status,
        body: errorBody(STATUS_CODES[status] ?? 'VALIDATION_ERROR', 'Request body could not be read'),
        headers: {},
      };
    }
    const fault = diskFault(exception);
    if (fault) {
      // The disk the files go to is full or takes no writes: the request was fine, and nothing of it was
      // kept (every write is to a temporary file, removed on failure); it may be sent again once there is
      // space. 507 says which, as WebDAV's Insufficient Storage does.
      return {
        status: fault === 'full' ? 507 : 503,
        body:
          fault === 'full'
            ? errorBody('STORAGE_FULL', 'The service has no storage space left right now; try again later')
            : errorBody('STORAGE_UNAVAILABLE', 'The service cannot write to its storage right now; try again later'),
        headers: { 'Retry-After': String(DISK_RETRY_AFTER_SECONDS) },
      };
    }
    if (isInfrastructureError(exception)) {
      // PostgreSQL, Redis or the store is unreachable: the request was fine and may be sent again.
      return {
        status: 503,
        body: errorBody(
          'SERVICE_UNAVAILABLE',
          'A service this request needs (database, Redis or storage) cannot be reached right now; try again shortly',
        ),
        headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
      };
    }
    return { status: 500, body: errorBody('INTERNAL_ERROR', 'Internal server error'), headers: {} };
  }

  /** One JSON line per outage window, with how many requests met it since the last one; never a stack. */
  private logOutage(exception: unknown): void {
    const now = Date.now();
    if (now - this.lastOutageLog < OUTAGE_LOG_INTERVAL_MS) {
      this.unloggedOutageErrors++;
      return;
    }
    const e = exception as { code?: unknown; message?: unknown };
    this.logger.warn({
      msg: 'requests answered 503: a dependency is unreachable',
      reason: `${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? exception)}`.slice(0, 300),
      also_since_last_line: this.unloggedOutageErrors,
    });
    this.lastOutageLog = now;
    this.unloggedOutageErrors = 0;
  }
}

function isSdfError(e: unknown): e is SdfLikeError {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SDF_ERROR_');
}

function httpMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  return exception.message;
}
