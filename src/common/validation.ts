import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { findUnsafeText } from '../sdf/index.js';
import { AppError, type ErrorDetail } from './errors.js';

function flatten(errors: ValidationError[], prefix = ''): ErrorDetail[] {
  return errors.flatMap((e) => {
    const path = `${prefix}/${e.property}`;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ path, message }));
    return [...own, ...flatten(e.children ?? [], path)];
  });
}

/**
 * Every query, path and body parameter of every route passes here before any handler: text that
 * PostgreSQL cannot take (NUL) or that is not Unicode (a lone surrogate) is refused with 400 as bad
 * input, instead of failing later in a query or in JSON output as a 500.
 */
class SafeTextValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const unsafe = findUnsafeText(value);
      if (unsafe) {
        const where = metadata.data ? `/${metadata.data}${unsafe.path}` : unsafe.path;
        throw AppError.badRequest(`Request ${metadata.type} ${unsafe.reason}`, [
          { path: where, message: `must not hold a NUL character or a lone UTF-16 surrogate` },
        ]);
      }
    }
    return super.transform(value, metadata);
  }
}

/** STYLE: whitelist, reject unknown fields, transform; failures become S5 VALIDATION_ERROR with JSON-pointer paths. */
export function createValidationPipe(): ValidationPipe {
  return new SafeTextValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => AppError.badRequest('Request validation failed', flatten(errors)),
  });
}
