import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SECURITY } from '../auth/decorators.js';

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
  return SwaggerModule.createDocument(app, config);
}

export function mountOpenApi(app: INestApplication, version: string): void {
  const document = buildOpenApiDocument(app, version);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
    customSiteTitle: 'SDF document service API',
  });
}
