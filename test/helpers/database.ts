import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the tests use: TEST_DATABASE_URL's host and credentials, default the local PostgreSQL. */
const BASE = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function testDatabaseUrl(name: string): string {
  const url = new URL(BASE);
  url.pathname = '/' + name;
  return url.toString();
}

export async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: testDatabaseUrl('postgres') });
  await client.connect();
  return client;
}

export async function createDatabaseFromTemplate(template: string): Promise<string> {
  const name = `sdf_test_${randomBytes(6).toString('hex')}`;
  const client = await adminClient();
  try {
    // Two copies of one template at the same instant can collide on its lock; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return name;
      } catch (err) {
        if (attempt >= 20 || (err as { code?: string }).code !== '55006') throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  const client = await adminClient();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
