import { describe, expect, it } from 'vitest';
import { SdfError } from '../errors.js';
import { checkJsonShape } from './json-shape.js';

const limits = { maxJsonDepth: 3, maxJsonValues: 5 };
const outcome = (text: string): string => {
  try {
    checkJsonShape(Buffer.from(text), 'data.json', limits, 'SDF_ERROR_INVALID_DATA');
    return 'ok';
  } catch (error) {
    return error instanceof SdfError ? error.code : String(error);
  }
};

describe('JSON shape pre-check', () => {
  it('counts depth and values outside strings only', () => {
    expect(outcome('{"a":[[1]]}')).toBe('ok');
    expect(outcome('{"a":[[[1]]]}')).toBe('SDF_ERROR_INVALID_DATA');
    expect(outcome('[1,2,3,4]')).toBe('ok');
    expect(outcome('[1,2,3,4,5,6]')).toBe('SDF_ERROR_ARCHIVE_TOO_LARGE');
    // Brackets and commas inside strings, escaped quotes and escaped backslashes are text, not structure.
    expect(outcome('["[[[[,,,,,,", "a\\"[[[[,,,,", "b\\\\"]')).toBe('ok');
    expect(outcome('["a\\\\", [[[1]]]]')).toBe('SDF_ERROR_INVALID_DATA');
  });

  it('leaves invalid JSON to the parser', () => {
    expect(outcome('{"unterminated')).toBe('ok');
    expect(outcome(']]]]')).toBe('ok');
  });
});
