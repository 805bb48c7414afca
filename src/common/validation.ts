import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, type ErrorDetail } from './errors.js';

function flatten(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const path = `${prefix}/${e.property}`;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ path, message }));
    return [...own, ...flatten(e.children ?? [], path)];
  });
}

/** STYLE: whitelist, reject unknown fields, transform; failures become S5 VALIDATION_ERROR with JSON-pointer paths. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => AppError.badRequest('Request validation failed', flatten(errors)),
  });
}
