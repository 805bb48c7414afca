import type { INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  SwaggerModule,
  type HeaderObject,
  type OpenAPIObject,
  type OperationObject,
} from '@nestjs/swagger';
import { SECURITY } from '../auth/decorators.js';

/**
 * S12: what every response to a tenant request carries once its credentials are accepted (set by the
 * rate-limit guard, so errors and 429 too; a 401 or 403 from the authentication step comes before it).
 */
const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      "Requests allowed per window: the tenant's rate_limit_rpm (on the managed deployment, its plan's). " +
      'Sent on every response once the credentials are accepted, errors included',
    schema: { type: 'integer' },
    example: 60,
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window',
    schema: { type: 'integer' },
    example: 59,
  },
  'X-RateLimit-Reset': {
    description: 'When the current window ends, in Unix seconds',
    schema: { type: 'integer' },
    example: 1773581460,
  },
};

const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer' },
  example: 30,
};

const TENANT_SCHEMES: string[] = [SECURITY.apiKey, SECURITY.tenantJwt];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/**
 * What no decorator can say once per route: the rate-limit headers on every response of a tenant
 * operation, errors and 429 included (the guard sets them on every tenant request before the handler
 * runs) and Retry-After on every 429 (each source of a 429 sets it). Both are components, referenced
 * where they apply.
 */
export function addResponseHeaders(document: OpenAPIObject): OpenAPIObject {
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  document.components = {
    ...document.components,
    headers: { ...document.components?.headers, ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER },
  };
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const op: OperationObject | undefined = item[method];
      if (!op) continue;
      const tenant = (op.security ?? []).some((s) => TENANT_SCHEMES.some((name) => name in s));
      for (const [status, response] of Object.entries(op.responses)) {
        if (!response || '$ref' in response) continue;
        if (tenant) {
          const headers = Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, ref(h)]));
          response.headers = { ...response.headers, ...headers };
        }
        if (status === '429') response.headers = { ...response.headers, 'Retry-After': ref('Retry-After') };
      }
    }
  }
  return document;
}

/** The OpenAPI 3.1 document, built from the decorators of the booted application. */
export function buildOpenApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('SDF document service')
    .setDescription(
      'Stores, validates, signs and distributes SDF files. Tenant endpoints take an API key (X-API-Key) or a ' +
        'tenant JWT (Authorization: Bearer); /admin/* takes an admin JWT.',
    )
    .setVersion(version)
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Tenant API key (sdf_k...)' },
      SECURITY.apiKey,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Tenant JWT (HS256)' },
      SECURITY.tenantJwt,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Admin JWT (HS256, admin secret)' },
      SECURITY.adminJwt,
    )
    .build();
  return addResponseHeaders(SwaggerModule.createDocument(app, config));
}

/**
 * Serves /openapi.json and Swagger UI at /docs. The document is built at the first request for either,
 * then kept: building it walks every controller and DTO, about a third of a warm start's CPU, which a
 * starting process need not spend before anyone asks for the document.
 */
export function mountOpenApi(app: INestApplication, version: string): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app, version), {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
    customSiteTitle: 'SDF document service API',
  });
}
