import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppConfig, projectRoot, resolveConfiguredPaths } from './app-config.js';
import { parseEnv } from './env.js';
import { SecretsMissingError } from './secrets.js';

describe('configuration paths', () => {
  it('resolves relative paths against the project root, whatever the current folder', () => {
    const env = resolveConfiguredPaths(parseEnv({ UPLOAD_TMP_DIR: 'tmp/uploads' }));
    expect(env.SECRETS_FILE).toBe(join(projectRoot, 'data/secrets.json'));
    expect(env.STORAGE_LOCAL_DIR).toBe(join(projectRoot, 'data/storage'));
    expect(env.UPLOAD_TMP_DIR).toBe(join(projectRoot, 'tmp/uploads'));
  });

  it('keeps absolute paths and an unset upload folder as they are', () => {
    const env = resolveConfiguredPaths(
      parseEnv({ SECRETS_FILE: '/etc/sdf/secrets.json', STORAGE_LOCAL_DIR: '/srv/sdf' }),
    );
    expect(env.SECRETS_FILE).toBe('/etc/sdf/secrets.json');
    expect(env.STORAGE_LOCAL_DIR).toBe('/srv/sdf');
    expect(env.UPLOAD_TMP_DIR).toBeUndefined();
  });

  it('never generates secrets unless asked to (only the service is)', () => {
    const file = `data/never-${process.pid}-${Date.now()}.json`;
    expect(() => AppConfig.fromEnv({ SECRETS_FILE: file })).toThrow(SecretsMissingError);
    expect(() => AppConfig.fromEnv({ SECRETS_FILE: file })).toThrow(join(projectRoot, file));
  });
});
