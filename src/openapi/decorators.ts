import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/error-response.dto.js';
import { errorBody, type ErrorDetail } from '../common/errors.js';
import { EXAMPLE_UUID } from './examples.js';

/** The client error statuses the document answers with the S5 body. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 410 | 413 | 422 | 429;

/**
 * One way an operation fails, as the service answers it: a code of src/common/errors.ts (or an
 * SDF_ERROR_* code at 422) and the message it sends. `name` tells the examples of one status apart.
 */
export interface ErrorCase {
  name: string;
  code: string;
  message: string;
  details?: ErrorDetail[];
  file?: string;
}

const ERROR_CASES = {
  // Unknown fields are refused everywhere (forbidNonWhitelisted), so this answer fits every body.
  invalidBody: {
    name: 'invalid_body',
    code: 'VALIDATION_ERROR',
    message: 'Request validation failed',
    details: [{ path: '/colour', message: 'property colour should not exist' }],
  },
  invalidQuery: {
    name: 'invalid_query',
    code: 'VALIDATION_ERROR',
    message: 'Request validation failed',
    details: [{ path: '/limit', message: 'limit must not be greater than 100' }],
  },
  malformedId: {
    name: 'malformed_id',
    code: 'VALIDATION_ERROR',
    message: 'Malformed identifier',
    details: [{ path: '/id', message: 'must be a UUID' }],
  },
  unsafeText: {
    name: 'unsafe_text',
    code: 'VALIDATION_ERROR',
    message: 'Request param holds a NUL character (U+0000)',
    details: [{ path: '/tenantSlug', message: 'must not hold a NUL character or a lone UTF-16 surrogate' }],
  },
  notMultipart: {
    name: 'not_multipart',
    code: 'VALIDATION_ERROR',
    message: 'Expected multipart/form-data with a file field',
    details: [{ path: '/file', message: 'is required (multipart/form-data)' }],
  },
  noCredentials: {
    name: 'no_credentials',
    code: 'UNAUTHORIZED',
    message: 'Credentials required: X-API-Key or Authorization: Bearer',
  },
  badApiKey: { name: 'bad_api_key', code: 'UNAUTHORIZED', message: 'Invalid, expired or revoked API key' },
  expiredToken: { name: 'expired_token', code: 'UNAUTHORIZED', message: 'Token expired' },
  sessionEnded: { name: 'session_ended', code: 'UNAUTHORIZED', message: 'Session ended' },
  noAdminToken: { name: 'no_admin_token', code: 'UNAUTHORIZED', message: 'Admin token required' },
  adminTokenOnTenantPath: {
    name: 'admin_token',
    code: 'FORBIDDEN',
    message: 'This endpoint takes tenant credentials, not an admin token',
  },
  notUserSession: {
    name: 'not_a_user_session',
    code: 'FORBIDDEN',
    message: 'This endpoint takes the access token of a signed-in user',
  },
  tenantCredentialsOnAdminPath: {
    name: 'tenant_credentials',
    code: 'FORBIDDEN',
    message: 'Admin endpoints require an admin token',
  },
  managersOnly: { name: 'member', code: 'FORBIDDEN', message: 'Only the owner or an admin may do this' },
  rateLimited: { name: 'rate_limited', code: 'RATE_LIMITED', message: 'Rate limit of 60 requests per minute exceeded' },
  authFailures: {
    name: 'auth_failures',
    code: 'RATE_LIMITED',
    message: 'Too many failed authentication attempts from this address',
  },
  quotaExceeded: {
    name: 'quota_exceeded',
    code: 'QUOTA_EXCEEDED',
    message: "The plan's api_calls quota for this billing period is used up",
    details: [{ path: '/quota/api_calls', message: 'quota exceeded until the period ends' }],
  },
  tooManyUploads: {
    name: 'too_many_uploads',
    code: 'RATE_LIMITED',
    message: 'Too many uploads in flight for this tenant (at most 16 at once)',
    details: [{ path: '/uploads_in_flight', message: 'must be at most 16' }],
  },
  bodyStalled: {
    name: 'body_stalled',
    code: 'REQUEST_TIMEOUT',
    message: 'The request body stalled: less than 10240 bytes arrived in 10000 ms',
    details: [{ path: '', message: 'must arrive at 10240 bytes per 10000 ms at least' }],
  },
  bodyTooLarge: { name: 'body_too_large', code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' },
  fileTooLarge: {
    name: 'file_too_large',
    code: 'PAYLOAD_TOO_LARGE',
    message: 'The file exceeds the maximum size of 52428800 bytes',
    details: [{ path: '/file', message: 'must be at most 52428800 bytes' }],
  },
} satisfies Record<string, ErrorCase>;

/** The error answers several operations share; a controller adds its own beside them. */
export const ERRORS: Readonly<Record<keyof typeof ERROR_CASES, ErrorCase>> = ERROR_CASES;

/** `What not found`, as AppError.notFound answers. */
export function notFound(what: string): ErrorCase {
  return {
    name: `${what.toLowerCase().replace(/\W+/g, '_')}_not_found`,
    code: 'NOT_FOUND',
    message: `${what} not found`,
  };
}

/**
 * One documented error status of an operation: the S5 body (ErrorResponseDto) with one example per
 * case. Two of the same status on one method merge (descriptions joined, examples side by side); one
 * on a method replaces the class's for that status.
 */
export function ApiError(status: ErrorStatus, description: string, ...cases: ErrorCase[]) {
  const examples = Object.fromEntries(
    cases.map((c) => [c.name, { summary: c.message, value: errorBody(c.code, c.message, c.details, c.file) }]),
  );
  return ApiResponse({ status, description, type: ErrorResponseDto, examples });
}

/** 400 for a request body that fails validation, and 413 for one over JSON_BODY_LIMIT_BYTES. */
export const JsonBodyErrors = (description = 'The body fails validation', ...more: ErrorCase[]) =>
  applyDecorators(
    ApiError(400, description, ERRORS.invalidBody, ...more),
    ApiError(413, 'The body is over JSON_BODY_LIMIT_BYTES (1 MiB by default)', ERRORS.bodyTooLarge),
  );

/**
 * A uuid path parameter: malformed is 400 before any lookup; unknown is 404, and so is another
 * tenant's (S5), so the answer never tells whether an id exists elsewhere.
 */
const IdErrors = (what: string, notFoundDescription = `No such ${what.toLowerCase()}`) =>
  applyDecorators(
    ApiError(400, `Malformed ${what.toLowerCase()} id (not a uuid)`, ERRORS.malformedId),
    ApiError(404, notFoundDescription, notFound(what)),
  );

/** A path parameter that is a uuid (UuidPipe): documented as one, with its 400 and 404. */
export const IdParam = (name: string, what: string, notFoundDescription?: string) =>
  applyDecorators(
    ApiParam({
      name,
      schema: { type: 'string', format: 'uuid' },
      example: EXAMPLE_UUID,
      description: `The ${what.toLowerCase()} id`,
    }),
    IdErrors(what, notFoundDescription),
  );
