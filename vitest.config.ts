import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/sequencer.js';

/**
 * End-to-end files whose assertions depend on time or on the machine being theirs: a page that must
 * answer within 200 ms, fuzzing at volume, fairness, throttling and upload bounds under load, timing
 * comparisons, and the fault tests whose outcome depends on how fast processes drain, which of two APIs
 * answers first, or how soon a new worker takes over a killed one's jobs. They run one at a time, with
 * nothing else running, after every other file.
 */
const ALONE = [
  'test/web-data-view.e2e-spec.ts',
  'test/web-initial-javascript.e2e-spec.ts',
  'test/fault-shutdown.e2e-spec.ts',
  'test/fault-instances.e2e-spec.ts',
  'test/fault-worker-kill.e2e-spec.ts',
  'test/fuzz-http.e2e-spec.ts',
  'test/validation-fairness.e2e-spec.ts',
  'test/tenant-slots.e2e-spec.ts',
  'test/signing-priority.e2e-spec.ts',
  'test/documents-uploads-in-flight.e2e-spec.ts',
  'test/rate-limit.e2e-spec.ts',
  'test/accounts-totp-bruteforce.e2e-spec.ts',
  'test/accounts-register-known-address.e2e-spec.ts',
];

/**
 * Files that spend most of their time waiting on something outside the test process: Chromium driving
 * the pages (a browser file keeps about half a core busy), a frozen Redis, and whole programs (npm, the
 * built service, the stand-ins) started in folders of their own. Their waits are bounded in seconds, not
 * milliseconds; three at a time fill the machine without starving one.
 */
const BROWSER_AND_PROGRAMS = [
  'test/web-*.e2e-spec.ts',
  'test/fault-redis.e2e-spec.ts',
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
  // expect.poll asks again until its condition holds: a page or a process answers when the machine gets
  // to it, which under a full suite can take longer than the default second. Waiting longer changes no
  // condition; a poll that needs another bound names its own.
  expect: { poll: { timeout: 15_000 } },
};

export default defineConfig({
  test: {
    // Each file boots its own application (its own database copy and Redis prefix) and closes it, so
    // files can share a worker's loaded modules: importing the application once per worker instead of
    // once per file saves several seconds a file.
    isolate: false,
    reporters: ['default', './test/reporters/slowest-files.ts'],
    // The longest files first within each project (test/file-durations.json), on a fresh clone too.
    sequence: { sequencer: LongestFirstSequencer },
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
          exclude: [...ALONE, ...BROWSER_AND_PROGRAMS],
          ...e2e,
          // Mostly waiting on PostgreSQL, Redis and child processes: four files at a time fill two cores.
          // The fault tests here (Redis down for 90 s, PostgreSQL down under an idle worker or for queued
          // jobs, a full or read-only disk, a store that never answers, workers killed around usage counts)
          // stop servers of their own and mostly wait, with bounds seconds wide.
          maxWorkers: 4,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e-browser',
          include: BROWSER_AND_PROGRAMS,
          exclude: ALONE,
          ...e2e,
          maxWorkers: 3,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: { name: 'e2e-alone', include: ALONE, ...e2e, maxWorkers: 1, sequence: { groupOrder: 3 } },
      },
    ],
  },
});
