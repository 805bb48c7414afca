import type { TestProject } from 'vitest/node';
import { runMigrations } from '../src/database/data-source.js';
import { adminClient, dropDatabase, testDatabaseUrl } from './helpers/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

/**
 * Migrates once into a template database; every e2e file then copies it (CREATE DATABASE ... TEMPLATE),
 * which takes milliseconds, and drops its copy when done (STYLE.md, Tests).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = `sdf_test_tpl_${process.pid}_${Date.now().toString(36)}`;
  const client = await adminClient();
  try {
    await client.query(`CREATE DATABASE "${template}"`);
  } finally {
    await client.end();
  }
  await runMigrations(testDatabaseUrl(template));
  project.provide('templateDatabase', template);
  return async () => {
    await dropDatabase(template);
  };
}
