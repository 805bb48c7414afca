import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/common/errors.js';
import { SDF_ERROR_CODES } from '../src/sdf/errors.js';
import { startApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/tenants.js';

/**
 * The OpenAPI document tells the truth about every operation: what it does, which errors it can answer
 * with (in the S5 body, with an example), the rate-limit headers of tenant responses, which ids are
 * uuids and examples on every schema. The rules read the document itself, so a route added later is
 * held to them without being listed here.
 */

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  example?: unknown;
  examples?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, { $ref?: string; schema?: Schema }>;
  content?: Record<string, MediaType>;
}
interface Operation {
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
  'x-alias-of'?: string;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    headers?: Record<string, { schema?: Schema; description?: string }>;
  };
}
interface Op {
  /** `METHOD /path`, as failures name it. */
  name: string;
  method: string;
  path: string;
  op: Operation;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const ERROR_STATUSES = ['400', '401', '403', '404', '408', '409', '413', '422', '429'];
const TENANT_SCHEMES = ['api-key', 'tenant-jwt'];
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Path parameters named like ids that are not uuids, and what they are instead. */
const NOT_UUID_IDS: Record<string, string> = {
  jobId: 'a queue job id: a document or push id, `<event id>_<webhook id>` for webhook deliveries, a number for mail',
  schemaId: 'a registered schema id such as invoice/v1, URL-encoded',
};
/** Error codes answered outside the S5 table of src/common/errors.ts, with their status. */
const OTHER_CODES: Record<string, number> = { EMAIL_NOT_VERIFIED: 403 };

function operationsOf(doc: Document): Op[] {
  const ops: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.includes(method)) ops.push({ name: `${method.toUpperCase()} ${path}`, method, path, op });
    }
  }
  return ops;
}

function resolve(doc: Document, schema: Schema | undefined): Schema | undefined {
  const ref = schema?.$ref;
  if (!ref) return schema;
  return doc.components.schemas[ref.replace('#/components/schemas/', '')];
}

const isTenantOperation = (op: Operation) => (op.security ?? []).some((s) => TENANT_SCHEMES.some((n) => n in s));
const isAuthenticated = (op: Operation) => (op.security ?? []).some((s) => Object.keys(s).length > 0);
const paramsOf = (op: Operation, where?: Parameter['in']) =>
  (op.parameters ?? []).filter((p) => where === undefined || p.in === where);
const idLike = (name: string) => name === 'id' || name.endsWith('Id');

/** S5: the error body is `{error: {code, message, details}}` (ErrorPayloadDto), alone or with more beside it. */
function carriesErrorBody(doc: Document, media: MediaType | undefined): boolean {
  const schema = resolve(doc, media?.schema);
  const error = schema?.properties?.error;
  const refs = [error, ...(error?.allOf ?? [])].map((s) => s?.$ref);
  return refs.includes('#/components/schemas/ErrorPayloadDto');
}

function examplesOf(media: MediaType | undefined): unknown[] {
  if (!media) return [];
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((e) => e.value);
}

/** An example's code must be one the service answers with at that status. */
function codeFits(code: unknown, status: number): boolean {
  if (typeof code !== 'string') return false;
  if ((ERROR_STATUS as Record<string, number>)[code] === status) return true;
  if (OTHER_CODES[code] === status) return true;
  return status === 422 && (SDF_ERROR_CODES as readonly string[]).includes(code);
}

/** A property needs no example of its own when it only points at other component schemas (checked themselves). */
function onlyReferences(schema: Schema): boolean {
  if (schema.$ref) return true;
  if (schema.items) return onlyReferences(schema.items);
  const members = [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])];
  return members.length > 0 && members.every((m) => m.type === 'null' || onlyReferences(m));
}

const hasExample = (s: Schema) => s.example !== undefined || (Array.isArray(s.examples) && s.examples.length > 0);

function problems(doc: Document): Record<string, string[]> {
  const ops = operationsOf(doc);
  const out: Record<string, string[]> = {
    description: [],
    uuidIds: [],
    headers: [],
    errorResponses: [],
    declaredErrors: [],
    rateLimitHeaders: [],
    retryAfter: [],
    schemaExamples: [],
  };

  for (const { name, op } of ops) {
    const description = op.description?.trim() ?? '';
    if (!description) out.description.push(`${name}: no description`);
    else if (description === op.summary?.trim()) out.description.push(`${name}: description repeats the summary`);

    for (const p of paramsOf(op, 'path')) {
      if (!idLike(p.name)) continue;
      if (p.name in NOT_UUID_IDS) {
        if (p.schema?.format === 'uuid') out.uuidIds.push(`${name}: {${p.name}} is not a uuid but says so`);
      } else if (p.schema?.format !== 'uuid') {
        out.uuidIds.push(`${name}: path parameter {${p.name}} lacks format: uuid`);
      }
    }

    const headers = paramsOf(op, 'header').map((p) => p.name.toLowerCase());
    const twice = headers.filter((h, i) => headers.indexOf(h) !== i);
    if (twice.length) out.headers.push(`${name}: header listed more than once: ${[...new Set(twice)].join(', ')}`);
    for (const p of paramsOf(op, 'header')) {
      if (p.name.toLowerCase() !== IDEMPOTENCY_HEADER) continue;
      if (p.name !== 'Idempotency-Key') out.headers.push(`${name}: spelled ${p.name}, not Idempotency-Key`);
      if (p.required) out.headers.push(`${name}: Idempotency-Key must be optional`);
    }

    for (const status of ERROR_STATUSES) {
      const response = op.responses[status];
      if (!response) continue;
      const media = response.content?.['application/json'];
      if (!carriesErrorBody(doc, media)) {
        out.errorResponses.push(`${name} ${status}: not the S5 error schema (application/json ErrorResponseDto)`);
        continue;
      }
      const examples = examplesOf(media);
      if (!examples.length) out.errorResponses.push(`${name} ${status}: no example`);
      for (const example of examples) {
        const code = (example as { error?: { code?: unknown } } | undefined)?.error?.code;
        if (!codeFits(code, Number(status))) {
          out.errorResponses.push(`${name} ${status}: example code ${String(code)} is not answered with ${status}`);
        }
      }
    }

    const required = new Set<string>();
    const hasBody = op.requestBody !== undefined;
    // Every body, query, path and header value passes validation (the global pipe, UuidPipe, the upload checks).
    if (hasBody || paramsOf(op).length) required.add('400');
    if (paramsOf(op, 'path').length) required.add('404');
    // JSON bodies are capped by the body parser, files by the upload limit.
    if (hasBody) required.add('413');
    if (op.requestBody?.content?.['multipart/form-data']) required.add('422');
    // The authentication step: no or bad credentials (401), the wrong kind (403), too many failures (429).
    if (isAuthenticated(op)) ['401', '403', '429'].forEach((s) => required.add(s));
    const missing = [...required].filter((s) => !op.responses[s]).sort();
    if (missing.length) out.declaredErrors.push(`${name}: does not declare ${missing.join(', ')}`);

    if (isTenantOperation(op)) {
      // The rate-limit guard sets them before the handler runs: on successes, errors and 429 alike.
      for (const [status, response] of Object.entries(op.responses)) {
        const lacking = RATE_LIMIT_HEADERS.filter((h) => !response.headers?.[h]);
        if (lacking.length) out.rateLimitHeaders.push(`${name} ${status}: lacks ${lacking.join(', ')}`);
      }
    }
    if (op.responses['429'] && !op.responses['429'].headers?.['Retry-After']) {
      out.retryAfter.push(`${name} 429: lacks the Retry-After header`);
    }
  }

  for (const [schemaName, schema] of Object.entries(doc.components.schemas)) {
    if (hasExample(schema)) continue;
    const props = Object.entries(schema.properties ?? {});
    if (!props.length) {
      out.schemaExamples.push(`${schemaName}: no example and no properties`);
      continue;
    }
    const lacking = props.filter(([, p]) => !hasExample(p) && !onlyReferences(p)).map(([n]) => n);
    if (lacking.length) out.schemaExamples.push(`${schemaName}: no example on ${lacking.join(', ')}`);
  }
  for (const [headerName, header] of Object.entries(doc.components.headers ?? {})) {
    if (!header.description || !header.schema) out.headers.push(`components.headers.${headerName}: incomplete`);
  }
  return out;
}

const MODES: [string, Record<string, string>][] = [
  ['self-hosted', {}],
  ['managed', { DEPLOYMENT_MODE: 'managed' }],
];

describe.each(MODES)('OpenAPI completeness, %s deployment', (_mode, env) => {
  let t: TestApp;
  let doc: Document;
  let found: Record<string, string[]>;

  beforeAll(async () => {
    t = await startApp({ env });
    doc = (await t.http().get('/openapi.json').expect(200)).body as Document;
    found = problems(doc);
  });
  afterAll(() => t.close());

  it('passes the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
  });

  it('describes every operation, beyond its summary', () => {
    expect(found.description).toEqual([]);
  });

  it('says format: uuid on every id path parameter that is one', () => {
    expect(found.uuidIds).toEqual([]);
  });

  it('lists each header once; Idempotency-Key optional, and on upload and its aliases', () => {
    expect(found.headers).toEqual([]);
    const uploads = operationsOf(doc).filter(
      ({ name, op }) => name === 'POST /upload' || op['x-alias-of'] === 'POST /upload',
    );
    expect(uploads.map((u) => u.name)).toContain('POST /upload');
    for (const { name, op } of uploads) {
      const keys = paramsOf(op, 'header').filter((p) => p.name.toLowerCase() === IDEMPOTENCY_HEADER);
      expect(keys, name).toHaveLength(1);
      // Swagger UI fills a parameter's example in: a fixed key would make a second try answer the first upload.
      const key = keys[0] as { example?: unknown; examples?: unknown; schema?: { example?: unknown } };
      expect([key.example, key.examples, key.schema?.example], name).toEqual([undefined, undefined, undefined]);
    }
  });

  it('answers every declared error in the S5 body, with an example of a code the service really sends', () => {
    expect(found.errorResponses).toEqual([]);
  });

  it('declares the errors each operation can answer with', () => {
    expect(found.declaredErrors).toEqual([]);
  });

  it('documents X-RateLimit-* on every response of a tenant operation (errors and 429 too), and Retry-After on every 429', async () => {
    expect(found.rateLimitHeaders).toEqual([]);
    // The walk reaches errors: tenant operations declare 4xx and 429 responses, all of them checked.
    const statuses = new Set(
      operationsOf(doc)
        .filter(({ op }) => isTenantOperation(op))
        .flatMap(({ op }) => Object.keys(op.responses)),
    );
    for (const status of ['400', '404', '429']) expect(statuses).toContain(status);
    // And the service does send them on an error of a tenant request.
    const tenant = await createTenant(t);
    const missing = await t.http().get('/meta/00000000-0000-4000-8000-000000000000').set('X-API-Key', tenant.apiKey);
    expect(missing.status).toBe(404);
    for (const h of RATE_LIMIT_HEADERS) expect(missing.headers[h.toLowerCase()], h).toBeDefined();
    expect(found.retryAfter).toEqual([]);
  });

  it('has an example on every schema (on the schema or on each of its properties)', () => {
    expect(found.schemaExamples).toEqual([]);
  });
});
