// The import graph of src/ between its top-level folders, and the rule that keeps it one-directional:
// the format core below the core service, the core service below the managed features, infrastructure
// below all. Read by test/architecture.e2e-spec.ts and printed by `node scripts/import-graph.mjs`.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts'))
      yield path;
  }
}

/** The folder of src/ a file belongs to; files directly in src/ are the composition root, `app`. */
export function areaOf(file) {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1] : 'app';
}

/** Every import (static, dynamic, re-export) from one file of src/ to another: `{ from, to }`, paths from the repository root. */
export function fileImports(root = ROOT) {
  const edges = [];
  for (const path of sourceFiles(join(root, 'src'))) {
    const from = relative(root, path).split(sep).join('/');
    const info = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = normalize(join(dirname(from), fileName))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      if (to.startsWith('src/')) edges.push({ from, to });
    }
  }
  return edges;
}

/** The layers, lowest first: a folder may import its own layer and those below it, nothing above. */
export const LAYERS = [
  { name: 'format core', areas: ['sdf'] },
  { name: 'infrastructure', areas: ['common', 'config', 'database', 'queue', 'redis', 'storage', 'telemetry'] },
  {
    name: 'core service',
    areas: [
      'tenants',
      'auth',
      'audit',
      'events',
      'rate-limit',
      'documents',
      'signing',
      'schemas',
      'webhooks',
      'admin',
      'health',
      'metrics',
      'email',
      'openapi',
      'web',
    ],
  },
  { name: 'managed features', areas: ['accounts', 'billing', 'saml', 'connectors'] },
  { name: 'composition root', areas: ['app', 'cli'] },
];

/** Files that compose the whole application and so sit in the composition root whatever their folder. */
const ROOT_FILES = new Set(['src/openapi/write-document.ts']);

/**
 * The one exception to the direction: the admin API's managed settings of a tenant (plan and limits, single
 * sign-on), which exist only where those features do.
 */
export const ALLOWED = [
  { from: 'src/admin/admin.module.ts', to: 'src/saml/saml.module.ts' },
  { from: 'src/admin/admin.service.ts', to: 'src/billing/billing.service.ts' },
  { from: 'src/admin/admin.service.ts', to: 'src/saml/idp-metadata.ts' },
  { from: 'src/admin/admin.service.ts', to: 'src/saml/saml-metadata.service.ts' },
  { from: 'src/admin/dto/tenant.dto.ts', to: 'src/billing/dto/billing.dto.ts' },
  { from: 'src/admin/dto/tenant.dto.ts', to: 'src/saml/return-path.ts' },
];

/**
 * The core's ports: what it needs from the outside, declared in the core, provided by a module by
 * dependency injection. `implementations` are the files that provide one.
 */
export const PORTS = [
  {
    name: 'UsageMetering',
    file: 'src/rate-limit/usage-metering.ts',
    purpose: 'usage metering and quota decisions (rate limit, uploads, signing, deletes)',
    implementations: ['src/rate-limit/unmetered-usage.ts', 'src/billing/usage-meter.service.ts'],
  },
  {
    name: 'SealedSecrets',
    file: 'src/common/sealed-secrets.ts',
    purpose: 'every column sealed under the master key, for its rotation',
    implementations: [
      'src/signing/signing-keys.module.ts',
      'src/webhooks/webhooks.module.ts',
      'src/connectors/connectors.module.ts',
    ],
  },
  {
    name: 'AuditReaders',
    file: 'src/audit/audit-readers.ts',
    purpose: 'who is the caller of an audit query, and may they read the trail',
    implementations: ['src/accounts/account-audit-readers.ts'],
  },
  {
    name: 'TenantLifecycle',
    file: 'src/admin/tenant-lifecycle.ts',
    purpose: 'what a module makes for a new tenant',
    implementations: ['src/billing/billing.module.ts'],
  },
];

function layerOf(file) {
  if (ROOT_FILES.has(file)) return LAYERS.length - 1;
  const area = areaOf(file);
  const index = LAYERS.findIndex((l) => l.areas.includes(area));
  if (index < 0) throw new Error(`src/${area}/ is in no layer: add it to LAYERS in scripts/import-graph.mjs`);
  return index;
}

/** Imports that point up a layer (and are not among the allowed ones): the rule holds when there are none. */
export function violations(edges = fileImports()) {
  const allowed = new Set(ALLOWED.map((a) => `${a.from} -> ${a.to}`));
  return edges
    .filter((e) => layerOf(e.to) > layerOf(e.from) && !allowed.has(`${e.from} -> ${e.to}`))
    .map((e) => `${e.from} -> ${e.to}`);
}

/** Which folders each folder imports, for the table in docs/architecture.md. */
export function areaGraph(edges = fileImports()) {
  const graph = new Map();
  for (const e of edges) {
    const from = areaOf(e.from);
    const to = areaOf(e.to);
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from).add(to);
  }
  return graph;
}

const mermaidId = (area) => area.replace(/-/g, '_');

/** The part of docs/architecture.md made from the imports: the diagram and the table. */
export function renderGraph(edges = fileImports()) {
  const graph = areaGraph(edges);
  const lines = ['```mermaid', 'flowchart BT'];
  for (const [i, layer] of LAYERS.entries()) {
    lines.push(`  subgraph layer${i}["${layer.name}"]`);
    for (const area of layer.areas) lines.push(`    ${mermaidId(area)}["${area}"]`);
    lines.push('  end');
  }
  // Layer to layer: what the folders of a layer import from the layers below; the allowed exception apart.
  const allowed = new Set(ALLOWED.map((a) => `${a.from} -> ${a.to}`));
  const layerEdges = new Set();
  const exceptions = new Set();
  for (const e of edges) {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (allowed.has(`${e.from} -> ${e.to}`)) {
      exceptions.add(`  ${mermaidId(areaOf(e.from))} -. "managed settings" .-> ${mermaidId(areaOf(e.to))}`);
    } else if (from !== to) layerEdges.add(`  layer${from} --> layer${to}`);
  }
  lines.push(...[...layerEdges].sort(), ...[...exceptions].sort());
  for (const port of PORTS) {
    const id = `port_${port.name}`;
    lines.push(`  ${id}{{"${port.name}"}}`);
    lines.push(`  ${id} -.- ${mermaidId(areaOf(port.file))}`);
    const providers = new Set(port.implementations.map(areaOf));
    for (const area of [...providers].sort()) lines.push(`  ${mermaidId(area)} -. provides .-> ${id}`);
  }
  lines.push('```', '');
  lines.push('| Folder | Layer | Imports from |', '| --- | --- | --- |');
  for (const layer of LAYERS) {
    for (const area of layer.areas) {
      const to = [...(graph.get(area) ?? [])].sort();
      lines.push(`| \`${area}\` | ${layer.name} | ${to.length ? to.map((a) => `\`${a}\``).join(', ') : '(nothing)'} |`);
    }
  }
  return lines.join('\n');
}

export const BEGIN = '<!-- import graph: generated by scripts/import-graph.mjs, do not edit by hand -->';
export const END = '<!-- end of import graph -->';

export const DOC = join(ROOT, 'docs/architecture.md');

/** docs/architecture.md with its generated part made again, formatted as the repository's Prettier does. */
export async function updatedArchitectureDoc(text, edges = fileImports()) {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error('docs/architecture.md lacks the import graph markers');
  const doc = `${text.slice(0, start + BEGIN.length)}\n\n${renderGraph(edges)}\n\n${text.slice(end)}`;
  const prettier = await import('prettier');
  return prettier.format(doc, { ...(await prettier.resolveConfig(DOC)), filepath: DOC });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { writeFileSync } = await import('node:fs');
  const edges = fileImports();
  const wrong = violations(edges);
  if (process.argv.includes('--write')) {
    writeFileSync(DOC, await updatedArchitectureDoc(readFileSync(DOC, 'utf8'), edges));
  } else {
    process.stdout.write(renderGraph(edges) + '\n');
  }
  if (wrong.length) {
    process.stderr.write(`imports against the direction:\n${wrong.map((w) => `  ${w}\n`).join('')}`);
    process.exitCode = 1;
  }
}
