import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../src/openapi/write-document.js';
import { distCli, projectRoot, requireBuild, runNode } from './helpers/processes.js';

/**
 * Users read the OpenAPI document, the CLI's help, error messages and the docs; none of them knows the
 * project's internal rule numbers (S7, F4, M3, C2 of the design notes), so none of that text may cite
 * one, nor the design notes themselves. Code comments may.
 */

// A rule id: a letter of the notes' sections and a number, as a word of its own. `/F1` is a PDF name, not a
// rule. `S3` is the storage API, alone and in parentheses; as a rule it is only recognised in a
// parenthesised list of several rule ids.
const RULE_ID = /(?<![\w/.])(?:[FMC]\d{1,2}|S(?:[0-24-9]|\d{2}))(?![\w.])/g;
const RULE_LIST = /\((?:[SFMC]\d{1,2}(?:\s*-\s*[SFMC]?\d{1,2})?(?:,\s*|\)))+/g;
const NOTES = /\b(?:DECISIONS(?:\.md)?|SDF-SPEC(?:\.md)?)\b/g;

const matches = (text: string) => [
  ...text.matchAll(RULE_ID),
  ...[...text.matchAll(RULE_LIST)].filter((m) => m[0] !== '(S3)'),
  ...text.matchAll(NOTES),
];

export function ruleIdsIn(text: string): string[] {
  return matches(text).map((m) => m[0]);
}

/** `where: the text around each rule id`, for a readable failure. */
function findings(where: string, text: string): string[] {
  return matches(text).map(
    (m) => `${where}: ...${text.slice(Math.max(0, m.index - 40), m.index + m[0].length + 20)}...`,
  );
}

/** Every string an operation, parameter or schema of the document says in words. */
function documentTexts(node: unknown, path: string, out: [string, string][]): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => documentTexts(v, `${path}/${i}`, out));
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if ((k === 'description' || k === 'summary' || k === 'title') && typeof v === 'string')
        out.push([`${path}/${k}`, v]);
      else documentTexts(v, `${path}/${k.replace(/\//g, '~1')}`, out);
    }
  }
}

/** Every string literal and template text of a TypeScript file: messages, descriptions, help. */
function stringsOf(file: string): [number, string][] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: [number, string][] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      out.push([source.getLineAndCharacterOfPosition(node.getStart()).line + 1, node.text]);
    }
    node.forEachChild(visit);
  };
  visit(source);
  return out;
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe('user-facing text names no internal rule ids', () => {
  beforeAll(() => requireBuild(distCli));

  it('the detector finds rule ids as they are cited, and leaves the storage API and PDF names alone', () => {
    expect(ruleIdsIn('Signed as F9 says (S7, S8)')).toEqual(['F9', 'S7', 'S8', '(S7, S8)']);
    expect(ruleIdsIn('states (S1, S3)')).toEqual(['S1', '(S1, S3)']);
    expect(ruleIdsIn('DECISIONS S1-S5 and M3')).toEqual(['S1', 'S5', 'M3', 'DECISIONS']);
    expect(ruleIdsIn('stored on S3 or MinIO; store (S3) down; /F1 12 Tf; SHA-256; P-256; 0xC1; S3-compatible')).toEqual(
      [],
    );
  });

  it('the OpenAPI document (both deployments: the managed one holds every operation)', async () => {
    const texts: [string, string][] = [];
    documentTexts(await openApiDocument(), '', texts);
    expect(texts.length).toBeGreaterThan(300);
    expect(texts.flatMap(([where, text]) => findings(`openapi.json#${where}`, text))).toEqual([]);
  });

  it("every command's --help of the sdf CLI", async () => {
    const helps: [string, string][] = [];
    const walk = async (command: string[]) => {
      const run = await runNode([distCli, ...command, '--help'], { PATH: process.env.PATH });
      expect(run.code, `sdf ${command.join(' ')} --help`).toBe(0);
      helps.push([`sdf ${command.join(' ')} --help`, run.stdout]);
      const listed = run.stdout.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '';
      const subcommands = [...listed.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]).filter((c) => c !== 'help');
      await Promise.all(subcommands.map((sub) => walk([...command, sub])));
    };
    await walk([]);
    const names = helps.map(([name]) => name);
    for (const command of ['sdf pack --help', 'sdf admin create-key --help', 'sdf admin rotate-master-key --help']) {
      expect(names).toContain(command);
    }
    expect(helps.flatMap(([where, text]) => findings(where, text))).toEqual([]);
  });

  it('the strings of the server and the CLI: error messages, descriptions, log lines', () => {
    const files = filesUnder(join(projectRoot, 'src'), (name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))
      // Fixtures for the tests, never shown to a user.
      .filter((file) => !relative(projectRoot, file).startsWith(join('src', 'sdf', 'testing')));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) =>
      stringsOf(file).flatMap(([line, text]) => findings(`${relative(projectRoot, file)}:${line}`, text)),
    );
    expect(found).toEqual([]);
  });

  it('the docs: README.md, docs/ and .env.example', () => {
    const docs = [
      'README.md',
      '.env.example',
      ...filesUnder(join(projectRoot, 'docs'), (name) => name.endsWith('.md')).map((f) => relative(projectRoot, f)),
    ];
    expect(docs.length).toBeGreaterThan(10);
    const found = docs.flatMap((doc) => findings(doc, readFileSync(join(projectRoot, doc), 'utf8')));
    expect(found).toEqual([]);
  });
});
