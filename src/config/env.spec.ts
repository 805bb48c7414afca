import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, envSchema, parseEnv } from './env.js';

describe('parseEnv', () => {
  it('fills every default from an empty environment', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      PORT: 3000,
      DEPLOYMENT_MODE: 'self-hosted',
      PROCESS_ROLE: 'all',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/sdf',
      REDIS_URL: 'redis://127.0.0.1:6379',
      MAX_UPLOAD_BYTES: 50 * 1024 * 1024,
      RATE_LIMIT_DEFAULT_RPM: 60,
    });
  });

  it('treats empty strings as unset', () => {
    expect(parseEnv({ PORT: '' }).PORT).toBe(3000);
  });

  it('keeps an empty DATABASE_APP_ROLE: connect as the connecting user, not as the default role', () => {
    expect(parseEnv({}).DATABASE_APP_ROLE).toBe('sdf_app');
    expect(parseEnv({ DATABASE_APP_ROLE: '' }).DATABASE_APP_ROLE).toBe('');
  });

  it('lists every bad or missing value at once', () => {
    let error: unknown;
    try {
      parseEnv({ PORT: 'eighty', PROCESS_ROLE: 'both', DEPLOYMENT_MODE: 'managed', MASTER_KEY: 'c2hvcnQ=' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'PROCESS_ROLE', 'MASTER_KEY']) expect(problems).toContain(name);
    // managed mode refuses generated secrets
    expect(problems).toMatch(/JWT_SECRET: required in managed mode/);
    expect(problems).toMatch(/ADMIN_JWT_SECRET: required in managed mode/);
  });

  it('requires the S3 settings only when the S3 driver is chosen', () => {
    expect(() => parseEnv({ STORAGE_DRIVER: 's3' })).toThrow(/S3_BUCKET/);
    expect(parseEnv({ STORAGE_DRIVER: 'local' }).STORAGE_DRIVER).toBe('local');
  });

  it('refuses a headers time-out longer than the request time-out', () => {
    expect(() => parseEnv({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '20000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/,
    );
    expect(() => parseEnv({ HTTP_HEADERS_TIMEOUT_MS: '700000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
    expect(parseEnv({ HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000' }).HTTP_REQUEST_TIMEOUT_MS).toBe(
      1000,
    );
  });

  it('refuses the same secret for tenant and admin tokens', () => {
    const same = 'x'.repeat(40);
    expect(() => parseEnv({ JWT_SECRET: same, ADMIN_JWT_SECRET: same })).toThrow(/must differ/);
  });

  it('is documented variable for variable in .env.example', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect([...new Set(documented)].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});
