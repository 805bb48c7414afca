import { defineConfig } from 'vitest/config';

/**
 * End-to-end files whose assertions depend on time or on the machine being theirs: faults caused for
 * real (outages, kills, drains), the browser, fuzzing at volume, fairness and throttling under load, and
 * files that run npm or the built service as whole programs. They run one at a time, after the others.
 */
const ALONE = [
  'test/fault-!(redis-long).e2e-spec.ts',
  'test/web-*.e2e-spec.ts',
  'test/fuzz-http.e2e-spec.ts',
  'test/validation-fairness.e2e-spec.ts',
  'test/tenant-slots.e2e-spec.ts',
  'test/signing-priority.e2e-spec.ts',
  'test/documents-uploads-in-flight.e2e-spec.ts',
  'test/rate-limit.e2e-spec.ts',
  'test/accounts-totp-bruteforce.e2e-spec.ts',
  'test/accounts-register-known-address.e2e-spec.ts',
  'test/job-outages.e2e-spec.ts',
  'test/build-if-stale.e2e-spec.ts',
  'test/lockfile.e2e-spec.ts',
  'test/readme-walkthrough.e2e-spec.ts',
  'test/managed-quick-start.e2e-spec.ts',
  'test/docker.e2e-spec.ts',
  'test/migration-scripts.e2e-spec.ts',
];

const e2e = {
  globalSetup: ['test/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Each file boots its own application (its own database copy and Redis prefix) and closes it, so
    // files can share a worker's loaded modules: importing the application once per worker instead of
    // once per file saves several seconds a file.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.spec.ts', 'web/src/**/*.spec.ts'],
          testTimeout: 30_000,
          // No test here depends on timing; two files at a time fill two cores.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e-spec.ts'],
          exclude: ALONE,
          ...e2e,
          // Mostly waiting on PostgreSQL, Redis and child processes: three files at a time fill two cores.
          // Redis down for 90 s (test/fault-redis-long) is here, not alone: it mostly waits, and its bound
          // on each answer is seconds wide.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'e2e-alone', include: ALONE, ...e2e, maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
