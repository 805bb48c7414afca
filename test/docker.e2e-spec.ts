import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { probeUrl } from '../src/health/probe.js';
import { projectRoot } from './helpers/processes.js';

const read = (path: string) => readFileSync(join(projectRoot, path), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;

function hasDockerCompose(): boolean {
  return spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0;
}

describe('container and Node version', () => {
  it("every Node base image of the Dockerfile is a major that package.json's engines accepts", () => {
    const majors = [...read('docker/Dockerfile').matchAll(/^FROM node:(\d+)[-\w.]*/gm)].map((m) => Number(m[1]));
    expect(majors.length).toBeGreaterThanOrEqual(2);
    for (const major of majors) {
      expect(semver.intersects(`${major}.x`, engines), `node:${major} against engines ${engines}`).toBe(true);
      // An active LTS line: even, and not one past its end of life (Node 20 ended in April 2026).
      expect(major % 2).toBe(0);
      expect(major).toBeGreaterThanOrEqual(22);
    }
  });

  it('engines accepts the Node this runs on, and the README names the same versions', () => {
    expect(semver.satisfies(process.version, engines)).toBe(true);
    expect(read('README.md')).toContain('Node.js 20.19+ (20.20 tested) or 22.12+');
  });

  it('the image installs with npm ci, has a .dockerignore that keeps secrets and history out, and probes by role', () => {
    const dockerfile = read('docker/Dockerfile');
    expect(dockerfile).toMatch(/RUN npm ci\b/);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(dockerfile).toMatch(/HEALTHCHECK .*dist\/src\/health\/probe-cli\.js/);
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.git', 'node_modules', 'data', '.env', 'docker/.env']) expect(ignored).toContain(entry);
    expect(probeUrl({ PROCESS_ROLE: 'api', PORT: '3000' })).toBe('http://127.0.0.1:3000/health');
    expect(probeUrl({ PROCESS_ROLE: 'worker', METRICS_PORT: '9464' })).toBe('http://127.0.0.1:9464/health');
    expect(probeUrl({ PROCESS_ROLE: 'worker' })).toEqual({ error: expect.stringContaining('METRICS_PORT') });
  });

  it('the compose file: restart policies, MinIO as S3, health by role (and docker-compose accepts it where installed)', () => {
    // Read as YAML (merge keys resolved) so the check holds on any machine; docker-compose, where it is
    // installed, also has to accept the file with the documented variables set.
    type Service = { restart?: string; environment?: Record<string, string>; healthcheck?: { test: string[] } };
    const compose = parse(read('docker/compose.yaml'), { merge: true }) as { services: Record<string, Service> };
    for (const service of ['api', 'worker', 'postgres', 'redis', 'minio']) {
      expect(compose.services[service]?.restart, service).toBe('unless-stopped');
      expect(compose.services[service]?.healthcheck?.test.length, service).toBeGreaterThan(0);
    }
    for (const role of ['api', 'worker']) {
      const env = compose.services[role].environment!;
      expect(env.PROCESS_ROLE).toBe(role);
      expect(env.STORAGE_DRIVER).toBe('s3');
      expect(env.S3_ENDPOINT).toBe('http://minio:9000');
      expect(compose.services[role].healthcheck!.test).toEqual(['CMD', 'node', 'dist/src/health/probe-cli.js']);
    }
    expect(compose.services.worker.environment!.METRICS_PORT).toBe('9464');
    if (!hasDockerCompose()) return;
    const env = {
      PATH: process.env.PATH,
      POSTGRES_PASSWORD: 'pg-password',
      JWT_SECRET: 'j'.repeat(48),
      ADMIN_JWT_SECRET: 'a'.repeat(48),
      MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
      MINIO_ROOT_USER: 'sdf-minio',
      MINIO_ROOT_PASSWORD: 'minio-password',
    };
    const config = execFileSync('docker-compose', ['-f', 'docker/compose.yaml', 'config'], {
      cwd: projectRoot,
      env,
      encoding: 'utf8',
    });
    expect(config).toContain('STORAGE_DRIVER: s3');
    expect(config).toContain('S3_ENDPOINT: http://minio:9000');
  });

  it('both app services build the image, and the managed file adds Mailpit and the managed settings to both', () => {
    type Service = { build?: unknown; image?: string; environment?: Record<string, string>; depends_on?: object };
    const base = parse(read('docker/compose.yaml'), { merge: true }) as { services: Record<string, Service> };
    // A clean machine has no sdf-service:local yet: whichever service starts first must be able to build it.
    for (const role of ['api', 'worker']) expect(base.services[role].build, role).toBeTruthy();
    const managed = parse(read('docker/compose.managed.yaml'), { merge: true }) as {
      services: Record<string, Service>;
    };
    expect(managed.services.mailpit.image).toMatch(/^axllent\/mailpit:/);
    for (const role of ['api', 'worker']) {
      const env = managed.services[role].environment!;
      expect(env.DEPLOYMENT_MODE).toBe('managed');
      expect(env.SMTP_URL).toBe('smtp://mailpit:1025');
      expect(env.PUBLIC_BASE_URL).toMatch(/^\$\{PUBLIC_BASE_URL:-http:\/\/localhost:3000\}$/);
      for (const name of [
        'SECRET_KEY',
        'WEBHOOK_SECRET',
        'PRICE_DEVELOPER',
        'PRICE_TEAM',
        'PRICE_BUSINESS',
        'RETURN_URL',
      ]) {
        expect(env[`STRIPE_${name}`], `${role} STRIPE_${name}`).toBe(`\${STRIPE_${name}:-}`);
      }
      expect(managed.services[role].depends_on).toHaveProperty('mailpit');
    }
    // The README tells how to run the two files together.
    expect(read('README.md')).toContain(
      'docker compose -f docker/compose.yaml -f docker/compose.managed.yaml up --build',
    );
    if (!hasDockerCompose()) return;
    const config = execFileSync(
      'docker-compose',
      ['-f', 'docker/compose.yaml', '-f', 'docker/compose.managed.yaml', 'config'],
      {
        cwd: projectRoot,
        env: {
          PATH: process.env.PATH,
          POSTGRES_PASSWORD: 'pg-password',
          JWT_SECRET: 'j'.repeat(48),
          ADMIN_JWT_SECRET: 'a'.repeat(48),
          MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
          MINIO_ROOT_USER: 'sdf-minio',
          MINIO_ROOT_PASSWORD: 'minio-password',
        },
        encoding: 'utf8',
      },
    );
    expect(config.match(/DEPLOYMENT_MODE: managed/g)).toHaveLength(2);
    expect(config.match(/SMTP_URL: smtp:\/\/mailpit:1025/g)).toHaveLength(2);
  });
});
