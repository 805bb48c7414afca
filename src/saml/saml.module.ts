import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import express from 'express';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from '../accounts/entities/user.entity.js';
import { WebhookResolver } from '../webhooks/ssrf.js';
import { AdminSamlController, SamlController } from './saml.controller.js';
import { SAML_RESOLVER, SamlMetadataService } from './saml-metadata.service.js';
import { SamlService } from './saml.service.js';

/** C1: per-tenant SAML 2.0 single sign-on (service provider side). */
@Module({
  // A single sign-on finds or makes the user, on both deployments.
  imports: [TypeOrmModule.forFeature([User])],
  controllers: [SamlController, AdminSamlController],
  // Its own token: the webhooks module's resolver stays the only WebhookResolver in the container.
  providers: [SamlService, SamlMetadataService, { provide: SAML_RESOLVER, useClass: WebhookResolver }],
  exports: [SamlMetadataService],
})
export class SamlModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // The HTTP-POST binding is a form post; nothing else in the service takes form bodies.
    consumer
      .apply(express.urlencoded({ extended: false, limit: '1mb', parameterLimit: 10 }))
      .forRoutes({ path: 'saml/:tenantSlug/acs', method: RequestMethod.POST });
  }
}
