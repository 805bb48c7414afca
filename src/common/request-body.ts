import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { AppError, errorBody } from './errors.js';

/** In every window of `windowMs` at least `minBytes` of a request body must arrive. */
export interface BodyStallRule {
  windowMs: number;
  minBytes: number;
}

/** A connection closed after its answer that has not gone by then is destroyed this much later. */
const CLOSE_GRACE_MS = 1_000;

export function bodyStalled(rule: BodyStallRule): AppError {
  const error = AppError.of(
    'REQUEST_TIMEOUT',
    `The request body stalled: less than ${rule.minBytes} bytes arrived in ${rule.windowMs} ms`,
    [{ path: '', message: `must arrive at ${rule.minBytes} bytes per ${rule.windowMs} ms at least` }],
  );
  return new AppError(error.status, error.code, error.message, error.details, { Connection: 'close' });
}

/** The request declares a body and not all of it has arrived yet. */
export function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length']);
  return Number.isFinite(length) && length > 0;
}

/** Closes the connection once the answer has gone out (Node's own close, with a bound under it). */
function closeWhenAnswered(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    const socket = req.socket;
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  });
}

/**
 * Every request body, on every route, before anything reads it:
 * - an answer given before the whole body has arrived (a refusal: 401, 413, 429 no upload slot, ...)
 *   says `Connection: close` and the connection is closed once the answer has gone out, instead of
 *   reading the rest of the body on a keep-alive connection until the request time-out;
 * - a body that delivers less than `rule.minBytes` in a window of `rule.windowMs` is cut: answered
 *   408 `REQUEST_TIMEOUT` (`Connection: close`) if nothing was answered yet, and the connection closed.
 * Bytes are counted as they reach the connection; time in which the service itself holds the body back
 * (the request's buffer is full: its reader is busy or has not started) does not count against the client.
 */
export function requestBodyGuard(rule: BodyStallRule) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!bodyStillArriving(req)) {
      next();
      return;
    }
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: unknown[]) {
      if (bodyStillArriving(req) && !this.headersSent) {
        this.setHeader('Connection', 'close');
        closeWhenAnswered(req, this);
      }
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as typeof res.writeHead;

    const socket = req.socket;
    let mark = socket.bytesRead;
    let since = Date.now();
    const watch = setInterval(
      () => {
        if (!bodyStillArriving(req) || socket.destroyed) {
          clearInterval(watch);
          return;
        }
        const now = Date.now();
        const heldBack = req.readableLength >= req.readableHighWaterMark;
        if (heldBack || socket.bytesRead - mark >= rule.minBytes) {
          mark = socket.bytesRead;
          since = now;
          return;
        }
        if (now - since < rule.windowMs) return;
        clearInterval(watch);
        if (res.headersSent) {
          socket.destroy();
          return;
        }
        const error = bodyStalled(rule);
        for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
        // Whatever was reading the body sees the connection go once this answer is out, and stops.
        res.status(error.status).json(errorBody(error.code, error.message, error.details));
      },
      Math.max(50, Math.floor(rule.windowMs / 5)),
    );
    watch.unref();
    res.once('close', () => {
      clearInterval(watch);
      // Answered (or gone) before the whole body came: whatever still reads it is told now. Node no longer
      // ends a request whose answer has gone out when its connection closes, so a reader would wait forever.
      if (bodyStillArriving(req)) req.destroy();
    });
    next();
  };
}
