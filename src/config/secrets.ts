import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Env } from './env.js';

export interface Secrets {
  jwtSecret: string;
  adminJwtSecret: string;
  /** Master keys by id; `currentKeyId` encrypts, the others only decrypt (S7 rotation). */
  masterKeys: Map<string, Buffer>;
  currentKeyId: string;
  /** Where the current master key came from, for messages: the MASTER_KEY variable or the secrets file. */
  masterKeySource: string;
  generatedFile?: string;
}

interface SecretsFile {
  jwt_secret: string;
  admin_jwt_secret: string;
  master_key: string;
}

/**
 * Self-hosted quick start: when a secret is not configured, one is generated once and kept in
 * SECRETS_FILE (mode 0600) so that every process on the host agrees on it and restarts keep working.
 * Managed mode refuses to start without explicit secrets (env.ts).
 */
export function resolveSecrets(env: Env, options: { generate: boolean } = { generate: false }): Secrets {
  let file: SecretsFile | undefined;
  let generatedFile: string | undefined;
  if (!env.JWT_SECRET || !env.ADMIN_JWT_SECRET || !env.MASTER_KEY) {
    file = options.generate ? loadOrCreateSecretsFile(env.SECRETS_FILE) : loadSecretsFile(env.SECRETS_FILE);
    generatedFile = env.SECRETS_FILE;
  }
  const masterKeys = new Map<string, Buffer>();
  masterKeys.set(env.MASTER_KEY_ID, Buffer.from(env.MASTER_KEY ?? file!.master_key, 'base64'));
  for (const pair of env.MASTER_KEYS_PREVIOUS.split(',').filter((p) => p.trim() !== '')) {
    const [id, key] = pair.trim().split(':');
    const bytes = Buffer.from(key, 'base64');
    if (bytes.length !== 32) throw new Error(`MASTER_KEYS_PREVIOUS: key ${id} is not 32 bytes`);
    if (!masterKeys.has(id)) masterKeys.set(id, bytes);
  }
  return {
    jwtSecret: env.JWT_SECRET ?? file!.jwt_secret,
    adminJwtSecret: env.ADMIN_JWT_SECRET ?? file!.admin_jwt_secret,
    masterKeys,
    currentKeyId: env.MASTER_KEY_ID,
    masterKeySource: env.MASTER_KEY ? 'the MASTER_KEY environment variable' : `the secrets file ${env.SECRETS_FILE}`,
    generatedFile,
  };
}

/** Raised when secrets are neither configured nor in the file the service writes. */
export class SecretsMissingError extends Error {
  constructor(readonly file: string) {
    super(
      `no secrets: JWT_SECRET, ADMIN_JWT_SECRET and MASTER_KEY are not all set, and ${file} does not exist. ` +
        'Start the service once (it writes that file) or set the variables, with the same values as the service.',
    );
    this.name = 'SecretsMissingError';
  }
}

function loadSecretsFile(path: string): SecretsFile {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SecretsFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SecretsMissingError(path);
    throw err;
  }
}

function loadOrCreateSecretsFile(path: string): SecretsFile {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SecretsFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const fresh: SecretsFile = {
    jwt_secret: randomBytes(48).toString('base64url'),
    admin_jwt_secret: randomBytes(48).toString('base64url'),
    master_key: randomBytes(32).toString('base64'),
  };
  mkdirSync(dirname(path), { recursive: true });
  try {
    // 'wx': two processes starting together must not both write; the loser reads the winner's file.
    writeFileSync(path, JSON.stringify(fresh, null, 2), { mode: 0o600, flag: 'wx' });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return JSON.parse(readFileSync(path, 'utf8')) as SecretsFile;
  }
}
