import { isIP } from 'node:net';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { TaskCancelledError, TimeoutStrategy, timeout } from 'cockatiel';
import type { DataSource } from 'typeorm';
import { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import {
  bareHostname,
  checkTargetAtRegistration,
  PrivateTargets,
  TargetRefusedError,
  WebhookResolver,
} from '../webhooks/ssrf.js';
import { openCredentials, type Credentials } from './credentials.js';
import type { Connector, HealthStatus } from './entities/connector.entity.js';
import { ErpClient, TokenCache } from './erp/client.js';
import { ErpHttpError, type TransportOptions } from './erp/http.js';
import type { ErpAdapter } from './erp/model.js';
import { OracleAdapter } from './erp/oracle.js';
import { SapAdapter } from './erp/sap.js';

/**
 * The connectors' name resolution: the webhook guard's resolver under a token of its own, so the two
 * features never share (or, in tests, stand in for) each other's instance.
 */
@Injectable()
export class ConnectorResolver extends WebhookResolver {}

/** Why a call failed, in words fit for a health reason or a push's error (never a credential). */
export function describeFailure(err: unknown): string {
  if (err instanceof ErpHttpError) return `HTTP ${err.status}: ${err.erpMessage}`;
  if (err instanceof TargetRefusedError) return `address refused on this deployment (${err.range})`;
  if (err instanceof TaskCancelledError) return 'no answer within the time-out';
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') return `connection failed (${e.code})`;
  return typeof e?.message === 'string' ? e.message : 'unknown failure';
}

/**
 * Each connector's way into its ERP: the adapter for its erp_type over an authenticated client,
 * and the connection rules of the deployment (managed: https only, the webhook address guard on
 * every connection, the token endpoint's included). One token cache per process.
 */
@Injectable()
export class ErpGateway {
  private readonly logger = new Logger('ErpGateway');
  private readonly tokens = new TokenCache();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly box: CryptoBox,
    /** The name resolution every connection checks (one injectable, so tests can stand in for DNS). */
    readonly resolver: ConnectorResolver,
  ) {}

  /** Managed deployment: connectors reach public https addresses only. */
  get guarded(): boolean {
    return this.config.isManaged;
  }

  get transport(): TransportOptions {
    const env = this.config.env;
    return {
      timeoutMs: env.ERP_TIMEOUT_MS,
      retryAttempts: env.ERP_RETRY_ATTEMPTS,
      retryBaseDelayMs: env.ERP_RETRY_BASE_DELAY_MS,
      guard: this.guarded,
      resolver: this.resolver,
    };
  }

  credentialsOf(c: Connector): Credentials {
    return openCredentials(this.box, c.id, c.credentials_enc);
  }

  /** The operator's exception to the address guard for a tenant's connectors (managed deployment). */
  async privateTargetsOf(tenantId: string): Promise<PrivateTargets> {
    if (!this.guarded) return new PrivateTargets([]);
    const rows = (await this.ds.query(`SELECT connector_private_targets FROM tenants WHERE id = $1`, [tenantId])) as {
      connector_private_targets: string[];
    }[];
    return new PrivateTargets(rows[0]?.connector_private_targets ?? []);
  }

  /** The adapter of a connector, its connections held to the guard with its tenant's exception (read now). */
  async adapterFor(c: Connector): Promise<ErpAdapter> {
    const transport = { ...this.transport, allowed: await this.privateTargetsOf(c.tenant_id) };
    const client = new ErpClient(c.id, c.base_url, this.credentialsOf(c), transport, this.tokens);
    return c.erp_type === 'SAP' ? new SapAdapter(client) : new OracleAdapter(client);
  }

  /**
   * A URL a connector will call (base_url, token_url): absolute http(s), no embedded user or
   * fragment; on the managed deployment https only and a public address (checked again at connect),
   * unless the operator listed the target for the tenant (connector_private_targets): then it may be
   * non-public, and plain http too (the operator vouches for the network path).
   */
  async checkUrl(raw: string, path: string, tenantId: string): Promise<string> {
    const bad = (message: string) => AppError.badRequest('Invalid connector address', [{ path, message }]);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('must be an absolute http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('scheme must be http or https');
    if (url.username || url.password) throw bad('credentials belong in `credentials`, not in the URL');
    if (url.hash) throw bad('must not carry a fragment');
    if (this.guarded) {
      const allowed = await this.privateTargetsOf(tenantId);
      if (url.protocol !== 'https:' && !(await this.onPrivateList(url, allowed))) {
        throw bad('must be https on this deployment');
      }
      try {
        await checkTargetAtRegistration(url, this.resolver, allowed);
      } catch (err) {
        if (err instanceof TargetRefusedError) {
          throw bad(`resolves to a non-public address (${err.range}); refused on this deployment`);
        }
        throw bad('host name does not resolve');
      }
    }
    return url.toString().replace(/\/$/, '');
  }

  /** Whether the operator listed this target: its host name, or every address it stands for. */
  private async onPrivateList(url: URL, allowed: PrivateTargets): Promise<boolean> {
    if (allowed.empty) return false;
    const host = bareHostname(url);
    if (allowed.allowsHost(host)) return true;
    const addresses = isIP(host) ? [host] : (await this.resolver.resolve(host).catch(() => [])).map((a) => a.address);
    return addresses.length > 0 && addresses.every((a) => allowed.allowsAddress(a));
  }

  /**
   * A light authenticated call, cut at the time-out and not retried (a health check reports what
   * it finds); the result and its time are stored on the row.
   */
  async checkHealth(c: Connector): Promise<{ status: HealthStatus; reason: string | null; checkedAt: Date }> {
    let status: HealthStatus = 'healthy';
    let reason: string | null = null;
    try {
      const adapter = await this.adapterFor(c);
      await timeout(this.config.env.ERP_TIMEOUT_MS, TimeoutStrategy.Aggressive).execute(({ signal }) =>
        adapter.healthCheck(signal),
      );
    } catch (err) {
      status = 'unhealthy';
      reason = describeFailure(err);
    }
    const rows = (await this.ds.query(
      `UPDATE connectors SET health_status = $3, health_reason = $4, last_health_check = now()
       WHERE id = $1 AND tenant_id = $2 RETURNING last_health_check`,
      [c.id, c.tenant_id, status, reason],
    )) as [{ last_health_check: Date }[], number];
    const checkedAt = rows[0]?.[0]?.last_health_check ?? new Date();
    if (status === 'unhealthy') {
      this.logger.warn({ msg: 'connector unhealthy', tenant_id: c.tenant_id, connector_id: c.id, reason });
    }
    return { status, reason, checkedAt };
  }
}
