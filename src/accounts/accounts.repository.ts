import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { AccountToken, type AccountTokenKind } from './entities/account-token.entity.js';
import { User } from './entities/user.entity.js';
import { normalizeEmail, randomToken, sha256Hex } from './secrets.js';

/** Users and mail tokens; every read by id is scoped by tenant. */
@Injectable()
export class AccountsRepository {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  findByEmail(email: string, m: EntityManager = this.ds.manager): Promise<User | null> {
    return m
      .createQueryBuilder(User, 'u')
      .where('lower(u.email) = :email', { email: normalizeEmail(email) })
      .getOne();
  }

  findForTenant(
    tenantId: string,
    userId: string,
    m: EntityManager = this.ds.manager,
    lock = false,
  ): Promise<User | null> {
    return m.findOne(User, {
      where: { id: userId, tenant_id: tenantId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  async requireForTenant(tenantId: string, userId: string, m?: EntityManager, lock = false): Promise<User> {
    const user = await this.findForTenant(tenantId, userId, m, lock);
    if (!user) throw AppError.notFound('User');
    return user;
  }

  /** The name of a user's organization, for the mails about their account. */
  async organizationName(tenantId: string): Promise<string | null> {
    const tenant = await this.ds.manager.findOne(Tenant, { where: { id: tenantId }, select: { id: true, name: true } });
    return tenant?.name ?? null;
  }

  listForTenant(tenantId: string): Promise<User[]> {
    return this.ds.manager.find(User, { where: { tenant_id: tenantId }, order: { created_at: 'ASC', id: 'ASC' } });
  }

  /** A fresh single-use mail token; only its hash is stored. Returns the raw token for the mail. */
  async issueToken(
    m: EntityManager,
    input: Pick<AccountToken, 'tenant_id' | 'kind' | 'email'> &
      Partial<Pick<AccountToken, 'user_id' | 'role' | 'created_by'>> & { ttlMs: number },
  ): Promise<string> {
    const raw = randomToken();
    await m.save(
      m.create(AccountToken, {
        tenant_id: input.tenant_id,
        kind: input.kind,
        email: normalizeEmail(input.email),
        user_id: input.user_id ?? null,
        role: input.role ?? null,
        created_by: input.created_by ?? null,
        token_hash: sha256Hex(raw),
        expires_at: new Date(Date.now() + input.ttlMs),
        used_at: null,
      }),
    );
    return raw;
  }

  /** Marks a token used if it is unused and unexpired; the conditional UPDATE makes it single-use under races. */
  async consumeToken(m: EntityManager, kind: AccountTokenKind, raw: string): Promise<AccountToken | null> {
    const rows = (await m.query(
      `UPDATE account_tokens SET used_at = now()
        WHERE token_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > now()
        RETURNING id`,
      [sha256Hex(raw), kind],
    )) as [{ id: string }[], number];
    const id = rows[0][0]?.id;
    return id ? m.findOne(AccountToken, { where: { id } }) : null;
  }

  /**
   * Retires open invitations of an organization: those to an address (one accepted, or its member removed:
   * a second invitation must not bring a removed member back) or those a user sent (they left).
   */
  async retireInvitations(
    m: EntityManager,
    tenantId: string,
    by: { email?: string; sentBy?: string },
  ): Promise<number> {
    const [, count] = (await m.query(
      `UPDATE account_tokens SET used_at = now()
        WHERE tenant_id = $1 AND kind = 'invitation' AND used_at IS NULL
          AND (email = $2 OR created_by = $3)`,
      [tenantId, by.email ? normalizeEmail(by.email) : null, by.sentBy ? `user:${by.sentBy}` : null],
    )) as [unknown, number];
    return count;
  }

  /** Whether a mail token exists at all (used, retired or expired): such a link is gone, not malformed. */
  async tokenExists(kind: AccountTokenKind, raw: string): Promise<boolean> {
    const rows = (await this.ds.query(`SELECT 1 FROM account_tokens WHERE token_hash = $1 AND kind = $2`, [
      sha256Hex(raw),
      kind,
    ])) as unknown[];
    return rows.length > 0;
  }

  /** Retires a user's unused tokens of a kind (a resend makes the older links useless). */
  async retireTokens(m: EntityManager, userId: string, kind: AccountTokenKind): Promise<void> {
    await m.query(`UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND kind = $2 AND used_at IS NULL`, [
      userId,
      kind,
    ]);
  }
}
