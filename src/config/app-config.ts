import { isAbsolute, resolve } from 'node:path';
import { parseEnv, type Env } from './env.js';
import { projectRoot, readPackageVersion } from './project.js';
import { resolveSecrets, type Secrets } from './secrets.js';

// Apart from the configuration, so that the command line reads its version without loading the schema of the environment.
export { projectRoot, readPackageVersion };

/** Typed, validated configuration; built once at boot and provided to every module. */
export class AppConfig {
  readonly version = readPackageVersion();

  constructor(
    readonly env: Env,
    readonly secrets: Secrets,
  ) {}

  /**
   * `generateSecrets`: only the service may create the secrets file (self-hosted quick start); the
   * command line reads it and refuses without it, so an operator can never mint tokens or seal keys
   * under secrets the service does not share.
   */
  static fromEnv(source: NodeJS.ProcessEnv = process.env, options: { generateSecrets?: boolean } = {}): AppConfig {
    const env = resolveConfiguredPaths(parseEnv(source));
    return new AppConfig(env, resolveSecrets(env, { generate: options.generateSecrets ?? false }));
  }

  get isManaged(): boolean {
    return this.env.DEPLOYMENT_MODE === 'managed';
  }

  /** S6: tenant access tokens live 8 h self-hosted and 15 min on the managed deployment. */
  get tenantTokenTtlSeconds(): number {
    return this.isManaged ? 15 * 60 : 8 * 60 * 60;
  }

  get runsApi(): boolean {
    return this.env.PROCESS_ROLE !== 'worker';
  }

  get runsWorkers(): boolean {
    return this.env.PROCESS_ROLE !== 'api';
  }
}

/** Relative paths in the configuration name places in the project, whatever folder a command runs from. */
export function resolveConfiguredPaths(env: Env, root: string = projectRoot): Env {
  const at = (p: string) => (isAbsolute(p) ? p : resolve(root, p));
  return {
    ...env,
    SECRETS_FILE: at(env.SECRETS_FILE),
    STORAGE_LOCAL_DIR: at(env.STORAGE_LOCAL_DIR),
    UPLOAD_TMP_DIR: env.UPLOAD_TMP_DIR === undefined ? undefined : at(env.UPLOAD_TMP_DIR),
  };
}
