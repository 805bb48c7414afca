import { describe, expect, it } from 'vitest';
import { JsonLogger } from './logger.js';

function capture(): { logger: JsonLogger; lines: string[] } {
  const lines: string[] = [];
  return { logger: new JsonLogger('debug', (line) => lines.push(line)), lines };
}

describe('JsonLogger (pino)', () => {
  it('writes one JSON line with level name, time, message and context', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'validated', tenant_id: 't1', id: 'd1' }, 'Worker');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', msg: 'validated', tenant_id: 't1', id: 'd1', context: 'Worker' });
    expect(typeof line.time).toBe('string');
  });

  it('redacts credential fields wherever they sit, and credentials by their shape in any text', () => {
    const { logger, lines } = capture();
    const apiKey = 'sdf_k' + 'A1b2C3d4'.repeat(5);
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl';
    logger.warn({
      msg: `refused ${apiKey} and Bearer opaque-token-value`,
      headers: { authorization: `Bearer ${jwt}`, 'x-api-key': apiKey, cookie: 'sid=cookie-value' },
      secret: 'webhook-secret-value',
      webhook: { secret: 'nested-secret-value', url: 'https://example.com' },
      private_key: 'private-key-value',
      detail: `token ${jwt}`,
    });
    const text = lines.join('\n');
    for (const leaked of [
      apiKey,
      jwt,
      'opaque-token-value',
      'cookie-value',
      'webhook-secret-value',
      'nested-secret-value',
      'private-key-value',
    ]) {
      expect(text).not.toContain(leaked);
    }
    expect(text).toContain('https://example.com');
    expect(text).toContain('[redacted]');
  });

  it('stays silent below its level', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('warn', (line) => lines.push(line));
    logger.log('info line');
    logger.debug('debug line');
    logger.error(new Error('boom'));
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['boom']);
  });
});
