import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, actionLabel, concernsDocument, TENANT_AUDIT_ACTIONS } from './audit-actions.js';

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * The action names the code writes: `action: 'x'` (also `action: cond ? 'x' : 'y'`), a module's own
 * `this.record(m, who, 'x', ...)` helper, and the SQL that inserts into audit_log itself.
 */
function recordedActions(): Set<string> {
  const found = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\baction:\s*(?:[^,\n?]*\?\s*)?'([\w.]+)'(?:\s*:\s*'([\w.]+)')?/g)) {
      found.add(m[1]!);
      if (m[2]) found.add(m[2]);
    }
    for (const m of text.matchAll(/this\.record\(\s*m,\s*[\w.]+,\s*(?:[\w.]+,\s*)?'([\w.]+)'/g)) found.add(m[1]!);
    for (const m of text.matchAll(
      /INSERT INTO [^(]*audit_log[^(]*\([^)]*\)\s*(?:VALUES\s*\(|SELECT)\s*[^,]+,\s*'([\w.]+)'/g,
    )) {
      found.add(m[1]!);
    }
  }
  return found;
}

describe('audit actions and their words', () => {
  it('lists every action the service records, once', () => {
    const recorded = recordedActions();
    // The scan finds the actions of each kind of writer (a sanity check on the scan itself).
    for (const known of [
      'upload',
      'sign',
      'login',
      'api_key.create',
      'connector.push_failed',
      'audit.partition_dropped',
    ]) {
      expect(recorded).toContain(known);
    }
    const listed = AUDIT_ACTIONS.map((a) => a.action);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...recorded].filter((a) => !listed.includes(a))).toEqual([]);
    expect(listed.filter((a) => !recorded.has(a))).toEqual([]);
  });

  it('reads each action in words; an unknown one as itself', () => {
    expect(actionLabel('upload')).toBe('Document uploaded');
    expect(actionLabel('sign')).toBe('Document signed');
    expect(actionLabel('api_key.create')).toBe('API key created');
    expect(actionLabel('some.future_action')).toBe('some.future_action');
    expect(concernsDocument('download')).toBe(true);
    expect(concernsDocument('team.invite')).toBe(false);
    expect(TENANT_AUDIT_ACTIONS.map((a) => a.action)).not.toContain('admin.dashboard_login');
  });
});
