import { Injectable, type PipeTransform } from '@nestjs/common';
import { AppError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A path parameter that must be a UUID; anything else is 400 before a query is made. */
@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw AppError.badRequest('Malformed identifier', [{ path: '/id', message: 'must be a UUID' }]);
    return value.toLowerCase();
  }
}
