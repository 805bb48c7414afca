import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArchive } from '../src/sdf/index.js';
import { pdfText } from '../src/sdf/testing/pdf-text.js';
import { distCli, projectRoot, requireBuild, runNode } from './helpers/processes.js';

/** `sdf render` writes the PDF alone; `sdf pack` puts the same layout into the file. */
describe('sdf render and sdf pack (built binary): the document layouts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdf-cli-render-'));
  const sdf = (...args: string[]) => runNode([distCli, ...args], { PATH: process.env.PATH });
  const example = (name: string, file: string): string => join(projectRoot, 'examples', name, `${file}.json`);

  beforeAll(() => requireBuild(distCli));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const name of ['invoice', 'purchase-order', 'nomination']) {
    it(`${name}: render writes only the PDF, and pack's visual.pdf reads the same`, async () => {
      const pdf = join(dir, `${name}.pdf`);
      const rendered = await sdf('render', '--data', example(name, 'data'), '-o', pdf);
      expect(rendered.code).toBe(0);
      expect(rendered.stdout).toBe(`${pdf}\n`);
      const bytes = readFileSync(pdf);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');

      const file = join(dir, `${name}.sdf`);
      const args = [
        '--data',
        example(name, 'data'),
        '--schema',
        example(name, 'schema'),
        '--meta',
        example(name, 'meta'),
      ];
      expect((await sdf('pack', ...args, '-o', file)).code).toBe(0);
      const packed = (await openArchive(readFileSync(file))).files.get('visual.pdf')!;
      const text = pdfText(bytes);
      expect(pdfText(packed)).toBe(text);

      const data = JSON.parse(readFileSync(example(name, 'data'), 'utf8')) as Record<string, unknown>;
      const number = String(data.invoice_number ?? data.order_number ?? data.nomination_id);
      expect(text).toContain(number);
      expect(text).toContain('Page 1 of 1');
      expect(text).not.toMatch(/^Line items:$/m);
    });
  }

  it('refuses data that is not a JSON object as a usage error', async () => {
    const data = join(dir, 'list.json');
    writeFileSync(data, '[1, 2]');
    const result = await sdf('render', '--data', data, '-o', join(dir, 'list.pdf'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not a JSON object');
  });
});
