import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import type { CreateWebhookDto } from './dto/webhook.dto.js';
import { WebhookDto } from './dto/webhook.dto.js';
import { Webhook } from './entities/webhook.entity.js';
import { checkTargetAtRegistration, TargetRefusedError, WebhookResolver } from './ssrf.js';

/** Who made the change and from where (S11). */
export interface WebhookActor {
  actor: string;
  ip: string | null;
}

/** S7: the secret's encryption is bound to its row, so a sealed secret cannot be moved to another webhook. */
/** Audit metadata keeps the target but never credentials embedded in it. */
function redactUrl(raw: string): string {
  const url = new URL(raw);
  if (url.username || url.password) {
    url.username = 'redacted';
    url.password = '';
  }
  return url.toString();
}

export function secretAssociatedData(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/**
 * S7: `secret_hash` is a keyed hash (CryptoBox.keyedHash) under this purpose, never a plain digest: a
 * person-chosen secret could be guessed offline from a database dump. Kept current by WebhookSecretHashes.
 */
export const SECRET_HASH_PURPOSE = 'webhook-secret';

@Injectable()
export class WebhooksService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly box: CryptoBox,
    private readonly audit: AuditService,
    private readonly resolver: WebhookResolver,
  ) {}

  /** S10: managed deployments refuse non-public targets; self-hosted allows them unless configured. */
  get guardsTargets(): boolean {
    return !(this.config.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? !this.config.isManaged);
  }

  async create(tenantId: string, input: CreateWebhookDto, by: WebhookActor): Promise<WebhookDto> {
    const url = await this.checkUrl(input.url);
    const id = randomUUID();
    return this.ds.transaction(async (m) => {
      // The tenant row is locked so that concurrent registrations count one after the other.
      const [tenant] = (await m.query(`SELECT id FROM tenants WHERE id = $1 FOR UPDATE`, [tenantId])) as unknown[];
      if (!tenant) throw AppError.notFound('Tenant');
      const limit = this.config.env.WEBHOOKS_PER_TENANT;
      if ((await m.count(Webhook, { where: { tenant_id: tenantId } })) >= limit) {
        throw AppError.of('CONFLICT', `A tenant may register at most ${limit} webhooks; delete one first`, [
          { path: '', message: `at most ${limit} webhooks per tenant (WEBHOOKS_PER_TENANT)` },
        ]);
      }
      const webhook = await m.save(
        m.create(Webhook, {
          id,
          tenant_id: tenantId,
          url,
          secret_enc: this.box.encrypt(input.secret, secretAssociatedData(id)),
          secret_hash: this.box.keyedHash(SECRET_HASH_PURPOSE, input.secret),
          events: [...new Set(input.events)],
          is_active: true,
        }),
      );
      await this.record(m, tenantId, 'webhook.create', id, by, { url: redactUrl(url), events: webhook.events });
      return WebhookDto.from(webhook);
    });
  }

  async list(tenantId: string, m: EntityManager = this.ds.manager): Promise<WebhookDto[]> {
    const rows = await m.find(Webhook, { where: { tenant_id: tenantId }, order: { created_at: 'ASC', id: 'ASC' } });
    return rows.map((w) => WebhookDto.from(w));
  }

  async listForAdmin(tenantId: string): Promise<WebhookDto[]> {
    if (!(await this.ds.manager.exists(Tenant, { where: { id: tenantId } }))) throw AppError.notFound('Tenant');
    return this.list(tenantId);
  }

  /** Tenant path: scoped by the caller's tenant; another tenant's webhook is 404 like a missing one (S5). */
  async remove(tenantId: string | null, id: string, by: WebhookActor): Promise<void> {
    await this.ds.transaction(async (m) => {
      const webhook = await m.findOne(Webhook, {
        where: tenantId ? { id, tenant_id: tenantId } : { id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!webhook) throw AppError.notFound('Webhook');
      await m.delete(Webhook, { id: webhook.id });
      await this.record(m, webhook.tenant_id, 'webhook.delete', webhook.id, by, { url: redactUrl(webhook.url) });
    });
  }

  /** Active webhooks of a tenant subscribed to an event (the dispatcher's question). */
  /** The active webhooks of these tenants, oldest first (the outbox dispatcher picks each event's subscribers). */
  activeOf(m: EntityManager, tenantIds: string[]): Promise<Webhook[]> {
    return m
      .createQueryBuilder(Webhook, 'w')
      .where('w.tenant_id = ANY(:tenantIds) AND w.is_active', { tenantIds })
      .orderBy('w.created_at', 'ASC')
      .getMany();
  }

  findForDelivery(tenantId: string, id: string): Promise<Webhook | null> {
    return this.ds.manager.findOne(Webhook, { where: { id, tenant_id: tenantId } });
  }

  secretOf(webhook: Webhook): string {
    return this.box.decryptString(webhook.secret_enc, secretAssociatedData(webhook.id));
  }

  /** S10: http(s) only, no fragment games; in guarded mode the target must be a public address. */
  private async checkUrl(raw: string): Promise<string> {
    const bad = (message: string) => AppError.badRequest('Invalid webhook URL', [{ path: '/url', message }]);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('scheme must be http or https');
    if (!url.hostname) throw bad('must name a host');
    if (this.guardsTargets) {
      try {
        await checkTargetAtRegistration(url, this.resolver);
      } catch (err) {
        if (err instanceof TargetRefusedError) {
          throw bad(`target resolves to a non-public address (${err.range}); refused on this deployment`);
        }
        throw bad('host name does not resolve');
      }
    }
    return url.toString();
  }

  private record(
    m: EntityManager,
    tenantId: string,
    action: string,
    resourceId: string,
    by: WebhookActor,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(m, { tenantId, action, resourceId, actor: by.actor, ipAddress: by.ip, metadata });
  }
}
