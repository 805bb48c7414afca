import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex, validate } from '../src/sdf/index.js';
import { INVOICE_SCHEMA, buildSdf } from '../src/sdf/testing/build-sdf.js';
import { SchemaRegistryService } from '../src/schemas/schema-registry.service.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant, type TenantFixture } from './helpers/tenants.js';

function expectError(body: unknown, code: string) {
  expect(body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array) } });
}

const schemaV1 = { ...INVOICE_SCHEMA, title: 'Invoice 1.0' };
const schemaV11 = { ...INVOICE_SCHEMA, title: 'Invoice 1.1' };

describe('schema registry (S14)', () => {
  let t: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  const asA = (req: ReturnType<ReturnType<TestApp['http']>['get']>) => req.set('X-API-Key', a.apiKey);

  beforeAll(async () => {
    t = await startApp({ env: { SCHEMA_MAX_BYTES: '20000' } });
    a = await createTenant(t);
    b = await createTenant(t);
  });
  afterAll(() => t.close());

  it('registers a schema: 201 with schema_id, version, created_at, and an audit entry', async () => {
    const res = await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: 'invoice/v1', version: '1.0', schema: schemaV1 })
      .expect(201);
    expect(res.body).toEqual({
      schema_id: 'invoice/v1',
      version: '1.0',
      created_at: expect.any(String),
      summary_mapping: null,
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const [row] = await t.ds.query(`SELECT tenant_id, content_hash FROM schemas WHERE schema_id = 'invoice/v1'`);
    expect(row).toEqual({ tenant_id: a.id, content_hash: sha256Hex(canonicalJson(schemaV1)) });
    const audit = await t.ds.query(`SELECT actor, metadata FROM audit_log WHERE tenant_id = $1 AND action = $2`, [
      a.id,
      'schema.create',
    ]);
    expect(audit).toEqual([
      {
        actor: `api_key:${a.keyPrefix}`,
        metadata: expect.objectContaining({ schema_id: 'invoice/v1', version: '1.0' }),
      },
    ]);
  });

  it('registers a second version and another schema id, then lists newest first', async () => {
    await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: 'invoice/v1', version: '1.1', schema: schemaV11 })
      .expect(201);
    await t
      .http()
      .post('/schemas')
      .set('Authorization', `Bearer ${t.tenantToken(a.id)}`)
      .send({ schema_id: 'nomination/v2.1', version: 'a', schema: { type: 'object' } })
      .expect(201);
    const res = await asA(t.http().get('/schemas')).expect(200);
    expect(res.body.schemas.map((s: { schema_id: string; version: string }) => `${s.schema_id}@${s.version}`)).toEqual([
      'nomination/v2.1@a',
      'invoice/v1@1.1',
      'invoice/v1@1.0',
    ]);
    expect(Object.keys(res.body.schemas[0]).sort()).toEqual(['created_at', 'schema_id', 'summary_mapping', 'version']);
  });

  it('fetches the latest version by both path forms, and another version with ?version=', async () => {
    const segments = await asA(t.http().get('/schemas/invoice/v1')).expect(200);
    expect(segments.body).toEqual(schemaV11);
    expect(segments.headers['x-schema-version']).toBe('1.1');
    const encoded = await asA(t.http().get('/schemas/invoice%2Fv1')).expect(200);
    expect(encoded.body).toEqual(schemaV11);
    const lower = await asA(t.http().get('/schemas/invoice%2fv1')).expect(200);
    expect(lower.body).toEqual(schemaV11);
    const old = await asA(t.http().get('/schemas/invoice/v1?version=1.0')).expect(200);
    expect(old.body).toEqual(schemaV1);
    expect(old.headers['x-schema-version']).toBe('1.0');
    const oldEncoded = await asA(t.http().get('/schemas/invoice%2Fv1').query({ version: '1.0' })).expect(200);
    expect(oldEncoded.body).toEqual(schemaV1);
    const dotted = await asA(t.http().get('/schemas/nomination/v2.1')).expect(200);
    expect(dotted.body).toEqual({ type: 'object' });
  });

  it('answers 404 for an unknown id, an unknown version and a malformed id', async () => {
    for (const path of [
      '/schemas/invoice/v9',
      '/schemas/invoice/v1?version=9.9',
      '/schemas/nope',
      '/schemas/a%2Fb%2Fc',
    ]) {
      const res = await asA(t.http().get(path)).expect(404);
      expectError(res.body, 'NOT_FOUND');
    }
  });

  it('answers 409 CONFLICT for a duplicate schema_id and version, whatever the content', async () => {
    const res = await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: 'invoice/v1', version: '1.0', schema: { type: 'object' } })
      .expect(409);
    expectError(res.body, 'CONFLICT');
    const [{ count }] = await t.ds.query(`SELECT count(*)::int AS count FROM schemas WHERE tenant_id = $1`, [a.id]);
    expect(count).toBe(3);
  });

  it.each([
    ['no version segment', 'invoice'],
    ['upper case', 'Invoice/v1'],
    ['a version without v', 'invoice/1'],
    ['a trailing dot', 'invoice/v1.'],
    ['three segments', 'invoice/v1/x'],
    ['a leading hyphen', '-invoice/v1'],
    ['a URL', 'https://example.com/invoice/v1'],
    ['too long', 'a'.repeat(300) + '/v1'],
  ])('answers 400 VALIDATION_ERROR for a malformed schema_id (%s)', async (_name, schemaId) => {
    const res = await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: schemaId, version: '1', schema: { type: 'object' } })
      .expect(400);
    expectError(res.body, 'VALIDATION_ERROR');
    expect(res.body.error.details[0].path).toBe('/schema_id');
  });

  it.each([
    ['an empty version', { version: '' }],
    ['a version with spaces', { version: '1 0' }],
    ['an over-long version', { version: 'x'.repeat(65) }],
    ['a missing schema', { schema: undefined }],
    ['an array as schema', { schema: [] }],
    ['an unknown field', { extra: 1 }],
  ])('answers 400 for %s', async (_name, override) => {
    const res = await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: 'bad/v1', version: '1', schema: { type: 'object' }, ...override })
      .expect(400);
    expectError(res.body, 'VALIDATION_ERROR');
  });

  it.each([
    ['an unknown keyword (strict)', { type: 'object', propertyz: {} }],
    ['an unknown format (strict formats)', { type: 'string', format: 'not-a-format' }],
    ['a remote $ref', { $ref: 'https://example.com/schemas/invoice.json' }],
    ['a dangling local $ref', { $ref: '#/$defs/missing' }],
    ['another draft', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }],
    ['a wrong type', { type: 'objekt' }],
  ])('answers 400 with the compile error in details for %s, and stores nothing', async (_name, schema) => {
    const res = await t
      .http()
      .post('/schemas')
      .set('X-API-Key', a.apiKey)
      .send({ schema_id: 'broken/v1', version: '1', schema })
      .expect(400);
    expectError(res.body, 'VALIDATION_ERROR');
    expect(res.body.error.details.length).toBeGreaterThan(0);
    expect(res.body.error.details[0]).toEqual({
      path: expect.stringMatching(/^\/schema/),
      message: expect.any(String),
    });
    const rows = await t.ds.query(`SELECT 1 FROM schemas WHERE schema_id = 'broken/v1'`);
    expect(rows).toEqual([]);
  });

  it('refuses hostile schemas with 400: too large, too deep, holding NUL', async () => {
    const big = { type: 'object', description: 'x'.repeat(25_000) };
    // Built as text: the test client's serializer would itself overflow on 20,000 levels.
    const deep = '{"type":"object","properties":{"a":'.repeat(20_000) + '{}' + '}}'.repeat(20_000);
    // Within the request-body depth limit but past the registry's own schema depth limit.
    const fairlyDeep = '{"type":"array","items":'.repeat(70) + '{}' + '}'.repeat(70);
    const nul = JSON.stringify({ type: 'object', description: 'a\u0000b' });
    const messages: string[] = [];
    for (const schema of [JSON.stringify(big), deep, fairlyDeep, nul]) {
      const res = await t
        .http()
        .post('/schemas')
        .set('X-API-Key', a.apiKey)
        .set('Content-Type', 'application/json')
        .send(`{"schema_id":"hostile/v1","version":"1","schema":${schema}}`)
        .expect(400);
      expectError(res.body, 'VALIDATION_ERROR');
      messages.push(res.body.error.message);
    }
    expect(messages).toEqual([
      'Schema is too large',
      'Request body is nested deeper than 100 levels',
      'Schema is nested too deeply',
      'Request body holds a NUL character (U+0000)',
    ]);
    expect(await t.ds.query(`SELECT 1 FROM schemas WHERE schema_id = 'hostile/v1'`)).toEqual([]);
  });

  it("keeps tenants apart: another tenant's schema is 404 and absent from its list; same id is free for it", async () => {
    for (const path of ['/schemas/invoice/v1', '/schemas/invoice%2Fv1', '/schemas/invoice/v1?version=1.0']) {
      const res = await t.http().get(path).set('X-API-Key', b.apiKey).expect(404);
      expectError(res.body, 'NOT_FOUND');
    }
    expect((await t.http().get('/schemas').set('X-API-Key', b.apiKey).expect(200)).body).toEqual({ schemas: [] });
    await t
      .http()
      .post('/schemas')
      .set('X-API-Key', b.apiKey)
      .send({ schema_id: 'invoice/v1', version: '1.0', schema: { type: 'object', title: 'B' } })
      .expect(201);
    expect((await t.http().get('/schemas/invoice/v1').set('X-API-Key', b.apiKey).expect(200)).body).toEqual({
      type: 'object',
      title: 'B',
    });
    expect((await asA(t.http().get('/schemas/invoice/v1')).expect(200)).body).toEqual(schemaV11);
  });

  it('requires credentials', async () => {
    await t.http().get('/schemas').expect(401);
    await t.http().post('/schemas').send({ schema_id: 'x/v1', version: '1', schema: {} }).expect(401);
  });

  describe('matchFor (registry_match)', () => {
    let registry: SchemaRegistryService;
    beforeAll(() => {
      registry = t.app.get(SchemaRegistryService);
    });
    const hash = (s: unknown) => sha256Hex(canonicalJson(s));

    it('is true when the embedded schema equals a registered version, formatting and key order aside', async () => {
      const reverseKeys = (v: unknown): unknown =>
        v && typeof v === 'object' && !Array.isArray(v)
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, c]) => [k, reverseKeys(c)]),
            )
          : v;
      const reordered = reverseKeys(schemaV1);
      expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(schemaV1));
      expect(await registry.matchFor(a.id, 'invoice/v1', hash(reordered))).toBe(true);
      expect(await registry.matchFor(a.id, 'invoice/v1', hash(schemaV11))).toBe(true);
    });

    it("takes the format core's schema_sha256 of an archive as is", async () => {
      const same = await validate(buildSdf({ schema: schemaV1 }));
      expect(await registry.matchFor(a.id, 'invoice/v1', same.schema_sha256)).toBe(true);
      const other = await validate(buildSdf({ schema: INVOICE_SCHEMA }));
      expect(other.valid).toBe(true);
      expect(await registry.matchFor(a.id, 'invoice/v1', other.schema_sha256)).toBe(false);
    });

    it('is false when the id is registered and the content differs', async () => {
      expect(await registry.matchFor(a.id, 'invoice/v1', hash({ ...schemaV1, title: 'changed' }))).toBe(false);
      expect(await registry.matchFor(a.id, 'invoice/v1', null)).toBe(false);
    });

    it('is null when the id is not registered for this tenant (or is not a registry id at all)', async () => {
      expect(await registry.matchFor(a.id, 'invoice/v7', hash(schemaV1))).toBeNull();
      expect(await registry.matchFor(a.id, 'https://example.com/invoice/v1', hash(schemaV1))).toBeNull();
      expect(await registry.matchFor(a.id, undefined, hash(schemaV1))).toBeNull();
      const other = await createTenant(t);
      expect(await registry.matchFor(other.id, 'invoice/v1', hash(schemaV1))).toBeNull();
      // Tenant B registered invoice/v1 with other content: A's schema does not match B's registry.
      expect(await registry.matchFor(b.id, 'invoice/v1', hash(schemaV1))).toBe(false);
    });
  });
});
