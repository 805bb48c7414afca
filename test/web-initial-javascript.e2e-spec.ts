import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { webDistDir } from '../src/web/web-app.js';

/** The initial page's weight: the scripts index.html loads (the built web front end, `npm run build`). */
describe('the web front end as first loaded', () => {
  it('loads at most 200 KB of JavaScript (gzip); the reader, its worker and pdf.js come later', () => {
    const dist = webDistDir();
    const html = readFileSync(join(dist, 'index.html'), 'utf8');
    const files = [...html.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThan(0);
    expect(files.some((file) => /pdf|reader-worker/.test(file))).toBe(false);
    const gzipBytes = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(dist, file))).length, 0);
    expect(gzipBytes).toBeLessThanOrEqual(200 * 1024);
  });
});
