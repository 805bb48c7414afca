import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints, after the run, how many tests ran, each project's span (its first file's start to its last
 * file's end) and the files that took longest: where the suite's time goes, so a slow file is seen in
 * every run, on a laptop and in CI alike. With RECORD_DURATIONS=1 (`npm run test:durations`) it also
 * writes every file's duration into test/file-durations.json, the order test/sequencer.ts starts files in.
 */
export default class SlowestFilesReporter implements Reporter {
  private started = Date.now();
  private readonly spans = new Map<string, { from: number; to: number }>();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestModuleStart(module: TestModule): void {
    const span = this.spans.get(module.project.name);
    if (!span) this.spans.set(module.project.name, { from: Date.now(), to: Date.now() });
  }

  onTestModuleEnd(module: TestModule): void {
    const span = this.spans.get(module.project.name);
    if (span) span.to = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = modules.map((module) => ({
      name: module.relativeModuleId,
      project: module.project.name,
      ms: module.diagnostic().duration,
      tests: [...module.children.allTests()].length,
    }));
    const tests = files.reduce((sum, file) => sum + file.tests, 0);
    const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, 15);
    const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`.padStart(8);
    const lines = [
      '',
      `${files.length} test files, ${tests} tests, ${seconds(Date.now() - this.started).trim()} wall time`,
      ...[...this.spans].map(
        ([project, span]) =>
          `${project.padEnd(9)} ${files.filter((f) => f.project === project).length} files, ` +
          `${seconds(span.to - span.from).trim()} from its first start to its last end ` +
          `(${seconds(span.from - this.started).trim()} to ${seconds(span.to - this.started).trim()} into the run)`,
      ),
      'slowest files:',
      ...slowest.map((file) => `${seconds(file.ms)}  ${file.project.padEnd(9)} ${file.name} (${file.tests} tests)`),
      '',
    ];
    process.stdout.write(lines.join('\n'));
    if (process.env.RECORD_DURATIONS === '1') {
      // Merged into what is there: a run of some files updates theirs only.
      const path = new URL('../file-durations.json', import.meta.url);
      const durations = JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
      for (const file of files) durations[file.name] = Math.round(file.ms);
      const root = new URL('../../', import.meta.url);
      const kept = Object.entries(durations).filter(([name]) => existsSync(new URL(name, root)));
      const sorted = Object.fromEntries(kept.sort(([a], [b]) => a.localeCompare(b)));
      writeFileSync(path, `${JSON.stringify(sorted, null, 2)}\n`);
    }
  }
}
