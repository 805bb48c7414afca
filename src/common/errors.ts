import { HttpStatus } from '@nestjs/common';

export interface ErrorDetail {
  path: string;
  message: string;
}

/** S5: the service's error codes and the HTTP status each one carries. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: HttpStatus.BAD_REQUEST,
  UNAUTHORIZED: HttpStatus.UNAUTHORIZED,
  FORBIDDEN: HttpStatus.FORBIDDEN,
  TOTP_LOCKED: HttpStatus.FORBIDDEN,
  NOT_FOUND: HttpStatus.NOT_FOUND,
  REQUEST_TIMEOUT: HttpStatus.REQUEST_TIMEOUT,
  CONFLICT: HttpStatus.CONFLICT,
  INVITATION_GONE: HttpStatus.GONE,
  INVALID_STATE: HttpStatus.CONFLICT,
  PAYLOAD_TOO_LARGE: HttpStatus.PAYLOAD_TOO_LARGE,
  UNSUPPORTED_MEDIA_TYPE: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  RATE_LIMITED: HttpStatus.TOO_MANY_REQUESTS,
  QUOTA_EXCEEDED: HttpStatus.TOO_MANY_REQUESTS,
  INTERNAL_ERROR: HttpStatus.INTERNAL_SERVER_ERROR,
  SERVICE_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  // The disk the service stores files on is full (507) or takes no writes (503); see `diskFault`.
  STORAGE_FULL: HttpStatus.INSUFFICIENT_STORAGE,
  STORAGE_UNAVAILABLE: HttpStatus.SERVICE_UNAVAILABLE,
  BILLING_NOT_CONFIGURED: HttpStatus.SERVICE_UNAVAILABLE,
} as const;

export type ServiceErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type of the service: a code, a message, details and the HTTP status. Anything
 * else that reaches the exception filter becomes a 500 INTERNAL_ERROR without its message.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  static of(code: ServiceErrorCode, message: string, details: ErrorDetail[] = []): AppError {
    return new AppError(ERROR_STATUS[code], code, message, details);
  }

  static badRequest(message: string, details: ErrorDetail[] = []): AppError {
    return AppError.of('VALIDATION_ERROR', message, details);
  }

  static unauthorized(message = 'Missing or invalid credentials'): AppError {
    return AppError.of('UNAUTHORIZED', message);
  }

  static forbidden(message = 'Insufficient permissions'): AppError {
    return AppError.of('FORBIDDEN', message);
  }

  /** S5: another tenant's resource is 404, exactly like one that does not exist. */
  static notFound(what = 'Resource'): AppError {
    return AppError.of('NOT_FOUND', `${what} not found`);
  }

  static conflict(message: string): AppError {
    return AppError.of('CONFLICT', message);
  }

  static invalidState(message: string): AppError {
    return AppError.of('INVALID_STATE', message);
  }
}

export interface ErrorBody {
  /** `file`: the archive entry an SDF failure concerns (F3), when it concerns one. */
  error: { code: string; message: string; details: ErrorDetail[]; file?: string };
}

export function errorBody(code: string, message: string, details: ErrorDetail[] = [], file?: string): ErrorBody {
  return { error: file === undefined ? { code, message, details } : { code, message, file, details } };
}
