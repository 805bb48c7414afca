import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the longest files first in each project, by the durations in test/file-durations.json (refresh
 * it with `npm run test:durations`), so a long file that mostly waits (an outage held for a minute) runs
 * beside the short ones instead of after them. Vitest's own order needs a cache from an earlier run on
 * the same checkout and falls back to file size, which a fresh clone (as CI runs) always gets. A file the
 * list does not name yet counts as a minute: new files tend to be long ones.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  private readonly durations = JSON.parse(
    readFileSync(new URL('./file-durations.json', import.meta.url), 'utf8'),
  ) as Record<string, number>;

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = (file: TestSpecification): number =>
      this.durations[relative(root, file.moduleId).split('\\').join('/')] ?? 60_000;
    const byProject = (a: TestSpecification, b: TestSpecification): number =>
      a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
      a.project.name.localeCompare(b.project.name);
    return Promise.resolve([...files].sort((a, b) => byProject(a, b) || expected(b) - expected(a)));
  }
}
