import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { migrations } from '../../migrations/index.js';
import { tenantScopedPg } from './tenant-scope.js';

/**
 * `appRole`: the role every connection acts as (DATABASE_APP_ROLE), set at connection start so that even
 * RESET ROLE returns to it. It owns no table and is held to row-level security; migrations and the
 * command line connect without it, as the owner.
 */
export function dataSourceOptions(databaseUrl: string, poolSize = 10, appRole = ''): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    // No entities here: the modules register theirs (the service) or the caller passes them (migrations).
    migrations,
    // Every connection the pool hands out is named for the tenant the caller acts for (row-level security).
    driver: tenantScopedPg,
    // Never synchronize: the schema changes only through migrations/.
    synchronize: false,
    migrationsRun: false,
    migrationsTransactionMode: 'each',
    extra: { max: poolSize, ...(appRole ? { options: `-c role=${appRole}` } : {}) },
  };
}

/** Creates the database named in the URL when it does not exist (npm start on a fresh machine). */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    } catch (err) {
      // Another process created it between the check and the create.
      if ((err as { code?: string }).code !== '42P04') throw err;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

/** Why the command line will not work on a database: it never creates or migrates one (the service does). */
export class DatabaseNotReadyError extends Error {}

/**
 * The command line's check before it touches the database: the database named in DATABASE_URL exists
 * and is migrated. A mistyped URL is reported, never turned into a new, empty database.
 */
export async function assertDatabaseReady(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const where = `database "${decodeURIComponent(url.pathname.slice(1))}" on ${url.hostname}:${url.port || 5432}`;
  const ds = new DataSource(dataSourceOptions(databaseUrl, 1));
  try {
    await ds.initialize();
  } catch (err) {
    if ((err as { code?: string }).code === '3D000') {
      throw new DatabaseNotReadyError(
        `${where} does not exist; check DATABASE_URL (the command line never creates a database: ` +
          'the service does on its first start, with DATABASE_AUTO_CREATE)',
      );
    }
    throw err;
  }
  try {
    if (await ds.showMigrations()) {
      throw new DatabaseNotReadyError(`${where} has pending migrations; start the service once (it migrates at start)`);
    }
  } finally {
    await ds.destroy();
  }
}

export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(databaseUrl, 1));
  await ds.initialize();
  try {
    // TypeORM takes a lock-free path; two processes migrating at once would race, so serialise on an advisory lock.
    await ds.query('SELECT pg_advisory_lock(727274)');
    try {
      const done = await ds.runMigrations({ transaction: 'each' });
      return done.map((m) => m.name);
    } finally {
      await ds.query('SELECT pg_advisory_unlock(727274)');
    }
  } finally {
    await ds.destroy();
  }
}
