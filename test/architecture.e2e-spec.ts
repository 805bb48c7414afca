import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DOC,
  fileImports,
  LAYERS,
  PORTS,
  updatedArchitectureDoc,
  violations,
  type ImportEdge,
} from '../scripts/import-graph.mjs';
import { AccountAuditReaders } from '../src/accounts/account-audit-readers.js';
import { AccountService } from '../src/accounts/account.service.js';
import { AuditReaders } from '../src/audit/audit-readers.js';
import { BillingService } from '../src/billing/billing.service.js';
import { UsageMeter } from '../src/billing/usage-meter.service.js';
import { SealedSecrets } from '../src/common/sealed-secrets.js';
import { allEntities } from '../src/entities.js';
import { UnmeteredUsage } from '../src/rate-limit/unmetered-usage.js';
import { UsageMetering } from '../src/rate-limit/usage-metering.js';
import { startApp, type TestApp } from './helpers/app.js';

const SEALED = ['connectors.credentials_enc', 'signing_keys.private_key_enc', 'webhooks.secret_enc'];

describe('one direction between the layers (docs/architecture.md)', () => {
  const edges = fileImports();

  it('no import of src/ goes against the direction', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(violations(edges)).toEqual([]);
  });

  it('an import from the core or infrastructure up to a managed feature is reported', () => {
    const wrong: ImportEdge[] = [
      { from: 'src/documents/upload.handler.ts', to: 'src/billing/usage-meter.service.ts' },
      { from: 'src/signing/master-key-rotation.ts', to: 'src/connectors/credentials.ts' },
      { from: 'src/audit/audit-query.controller.ts', to: 'src/accounts/account.service.ts' },
      { from: 'src/database/data-source.ts', to: 'src/documents/entities/document.entity.ts' },
      { from: 'src/queue/queue.module.ts', to: 'src/audit/audit.service.ts' },
      { from: 'src/sdf/validate.ts', to: 'src/common/errors.ts' },
    ];
    expect(violations(wrong)).toEqual(wrong.map((e) => `${e.from} -> ${e.to}`));
    // The admin API's managed settings are the one exception, by file.
    expect(violations([{ from: 'src/admin/admin.service.ts', to: 'src/billing/billing.service.ts' }])).toEqual([]);
    expect(violations([{ from: 'src/admin/admin.controller.ts', to: 'src/billing/billing.service.ts' }])).toHaveLength(
      1,
    );
  });

  it('database/, queue/, redis/ and storage/ import infrastructure and the format core alone', () => {
    const below = new Set([...LAYERS[0]!.areas, ...LAYERS[1]!.areas]);
    const infra = edges.filter((e) => /^src\/(database|queue|redis|storage)\//.test(e.from));
    expect(infra.length).toBeGreaterThan(0);
    expect(infra.filter((e) => !below.has(e.to.split('/')[1]!))).toEqual([]);
  });

  it('every port is declared where the table says and imported by each module that provides it', () => {
    for (const port of PORTS) {
      expect(readFileSync(port.file, 'utf8')).toContain(`class ${port.name}`);
      for (const file of port.implementations) {
        expect(edges, `${file} provides ${port.name}`).toContainEqual({ from: file, to: port.file });
      }
    }
  });

  it('docs/architecture.md shows the graph of the code as it is', async () => {
    const text = readFileSync(DOC, 'utf8');
    expect(text, 'made again by `node scripts/import-graph.mjs --write`').toBe(
      await updatedArchitectureDoc(text, edges),
    );
  });
});

describe('the self-hosted deployment', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('boots without the billing and accounts providers: the core ports answer with their own', () => {
    expect(t.app.get(UsageMetering)).toBeInstanceOf(UnmeteredUsage);
    for (const managed of [UsageMeter, BillingService, AccountService, AuditReaders]) {
      expect(() => t.app.get(managed, { strict: false }), managed.name).toThrow();
    }
  });

  it('every module that seals a secret registered its column', () => {
    expect(
      t.app
        .get(SealedSecrets)
        .columns()
        .map((c) => `${c.table}.${c.column}`),
    ).toEqual(SEALED);
  });
});

describe('the managed deployment', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { DEPLOYMENT_MODE: 'managed' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("provides the core's ports from its own modules", () => {
    expect(t.app.get(UsageMetering)).toBeInstanceOf(UsageMeter);
    expect(t.app.get(UsageMetering)).toBe(t.app.get(UsageMeter));
    expect(t.app.get(AuditReaders, { strict: false })).toBeInstanceOf(AccountAuditReaders);
  });

  it('registers, module by module, exactly the entities the migration data source reads', () => {
    const loaded = t.app.get(DataSource).entityMetadatas.map((m) => m.target);
    expect(new Set(loaded)).toEqual(new Set(allEntities));
    expect(loaded).toHaveLength(allEntities.length);
    expect(
      t.app
        .get(SealedSecrets)
        .columns()
        .map((c) => `${c.table}.${c.column}`),
    ).toEqual(SEALED);
  });
});
