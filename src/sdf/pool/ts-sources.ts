import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

let prepared: string | undefined;

/**
 * Only for running from TypeScript sources (the test runner), where a worker process cannot load
 * `.ts`: transpiles the format core once per process into a temporary folder (types stripped, no
 * type check) beside a link to the project's node_modules, and returns the worker's file URL there.
 * Compiled builds never come here; they load validate-worker.js next to pool.js.
 */
export function transpiledWorkerUrl(poolModuleUrl: string): string {
  if (prepared) return prepared;
  const require = createRequire(poolModuleUrl);
  const ts = require('typescript') as typeof import('typescript');
  const sdfRoot = dirname(dirname(fileURLToPath(poolModuleUrl)));
  const out = mkdtempSync(join(tmpdir(), 'sdf-worker-'));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const source = join(dir, entry.name);
      const target = join(out, 'sdf', relative(sdfRoot, source));
      if (entry.isDirectory()) walk(source);
      else if (entry.name.endsWith('.json')) cpSync(source, target);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        mkdirSync(dirname(target), { recursive: true });
        const output = ts.transpileModule(readFileSync(source, 'utf8'), {
          fileName: source,
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        });
        writeFileSync(target.replace(/\.ts$/, '.js'), output.outputText);
      }
    }
  };
  mkdirSync(join(out, 'sdf'), { recursive: true });
  walk(sdfRoot);
  let project = sdfRoot;
  while (!existsSync(join(project, 'node_modules')) && dirname(project) !== project) project = dirname(project);
  symlinkSync(join(project, 'node_modules'), join(out, 'node_modules'), 'dir');
  writeFileSync(join(out, 'package.json'), '{"type":"module"}\n');
  prepared = new URL(`file://${join(out, 'sdf', 'pool', 'validate-worker.js')}`).href;
  return prepared;
}
