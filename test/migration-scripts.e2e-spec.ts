import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { adminClient, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import { projectRoot, requireBuild, runNode } from './helpers/processes.js';

const DATA_SOURCE = 'dist/src/database/migration-data-source.js';
const TYPEORM_CLI = join(projectRoot, 'node_modules/typeorm/cli.js');

/**
 * `npm run migration:*` is `npm run build` followed by the TypeORM command line on the exported data
 * source. The test runs that second half on the build at hand (rebuilding here would pull dist/ from
 * under the other test files), and checks that the scripts say exactly that.
 */
describe('TypeORM migration scripts', () => {
  let database: string;
  let dir: string;
  const typeorm = (...args: string[]) =>
    runNode([TYPEORM_CLI, ...args, '-d', DATA_SOURCE], {
      PATH: process.env.PATH,
      DATABASE_URL: testDatabaseUrl(database),
    });

  beforeAll(async () => {
    requireBuild(join(projectRoot, DATA_SOURCE));
    database = `sdf_test_mig_${process.pid}_${Date.now().toString(36)}`;
    const client = await adminClient();
    try {
      await client.query(`CREATE DATABASE "${database}"`);
    } finally {
      await client.end();
    }
    dir = mkdtempSync(join(tmpdir(), 'sdf-migration-'));
  });
  afterAll(async () => {
    await dropDatabase(database);
    rmSync(dir, { recursive: true, force: true });
  });

  it('package.json runs the TypeORM command line on the exported data source', () => {
    const scripts = (
      JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    for (const command of ['run', 'revert', 'show', 'generate']) {
      expect(scripts[`migration:${command}`]).toMatch(
        new RegExp(`^npm run build && typeorm migration:${command} -d ${DATA_SOURCE.replaceAll('.', '\\.')}`),
      );
    }
  });

  it('show lists every migration pending, run applies them, revert undoes the last one', async () => {
    const last = migrations.at(-1)!.name;
    const pending = await typeorm('migration:show');
    expect(pending.stdout.match(/^\[ \] /gm)).toHaveLength(migrations.length);

    const run = await typeorm('migration:run');
    expect(run.code).toBe(0);
    const applied = await typeorm('migration:show');
    expect(applied.stdout.match(/^\[X\] /gm)).toHaveLength(migrations.length);

    const reverted = await typeorm('migration:revert');
    expect(reverted.code).toBe(0);
    const after = await typeorm('migration:show');
    expect(after.stdout).toContain(`[ ] ${last}`);
    expect(after.stdout.match(/^\[X\] /gm)).toHaveLength(migrations.length - 1);
  });

  it('generate writes a migration file from the entities', async () => {
    const out = join(dir, 'Draft');
    const generated = await typeorm('migration:generate', out);
    expect(generated.code).toBe(0);
    const [file] = readdirSync(dir);
    expect(file).toMatch(/^\d+-Draft\.ts$/);
    const draft = readFileSync(join(dir, file), 'utf8');
    expect(draft).toMatch(/export class Draft\d+ implements MigrationInterface/);
    expect(draft).toContain('public async up(queryRunner: QueryRunner)');
  });
});
