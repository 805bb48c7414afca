import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { adminClient, dropDatabase, testDatabaseUrl } from './helpers/database.js';
import { projectRoot, requireBuild, runNode, runProgram } from './helpers/processes.js';

const DATA_SOURCE = 'dist/src/migration-data-source.js';
const TYPEORM_CLI = join(projectRoot, 'node_modules/typeorm/cli.js');

/**
 * `npm run migration:*` is `npm run migration:build` (compile over dist/ when the TypeScript sources and
 * compiler are there, else use dist/ as built) followed by the TypeORM command line on the exported data
 * source. The test runs that second half on the build at hand (rebuilding here would change dist/ under
 * the other test files), checks that the scripts say exactly that, and runs the whole script in a copy
 * of the container image's layout.
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
        new RegExp(
          `^npm run --silent migration:build && typeorm migration:${command} -d ${DATA_SOURCE.replaceAll('.', '\\.')}`,
        ),
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

  it("the README's container command runs in the image's layout (dist, production modules, no TypeScript) and keeps dist/", async () => {
    // The image holds package.json, dist/ and node_modules without dev dependencies: no tsc, no tsconfig.
    const image = join(dir, 'image');
    mkdirSync(join(image, 'node_modules', '.bin'), { recursive: true });
    cpSync(join(projectRoot, 'package.json'), join(image, 'package.json'));
    cpSync(join(projectRoot, 'dist'), join(image, 'dist'), { recursive: true });
    for (const entry of readdirSync(join(projectRoot, 'node_modules'))) {
      if (entry === 'typescript' || entry === '.bin') continue;
      symlinkSync(join(projectRoot, 'node_modules', entry), join(image, 'node_modules', entry));
    }
    symlinkSync(join(projectRoot, 'node_modules/typeorm/cli.js'), join(image, 'node_modules/.bin/typeorm'));
    const distBefore = readdirSync(join(image, 'dist'), { recursive: true }).sort();
    // No tsc anywhere on the PATH either (a developer's node_modules/.bin included).
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((p) => p && !existsSync(join(p, 'tsc')))
      .join(delimiter);
    const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
    const command = /docker compose -f docker\/compose\.yaml exec api (npm run migration:show)/.exec(readme)?.[1];
    expect(command, 'the container command in the README').toBe('npm run migration:show');
    const [program, ...args] = command!.split(' ');
    const show = await runProgram(program, args, {
      cwd: image,
      env: { PATH: path, HOME: dir, DATABASE_URL: testDatabaseUrl(database) },
    });
    expect(show.stderr).toContain('using the built code in dist/');
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^\[[ X]\] /m);
    expect(readdirSync(join(image, 'dist'), { recursive: true }).sort()).toEqual(distBefore);
    expect(existsSync(join(image, DATA_SOURCE))).toBe(true);
  });
});
