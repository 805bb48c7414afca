import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { TenantLifecycle } from '../admin/tenant-lifecycle.js';
import { AuditService } from '../audit/audit.service.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { MailService } from '../email/mail.service.js';
import { RedisService } from '../redis/redis.module.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { AccountsRepository } from './accounts.repository.js';
import type { LoginDto, RegisterDto, RegistrationAcceptedDto } from './dto/auth.dto.js';
import { User } from './entities/user.entity.js';
import { LoginThrottle } from './login-throttle.js';
import { LoginTickets } from './login-tickets.js';
import { addressTakenMail, passwordResetMail, verificationMail } from './mails.js';
import { hashPassword, passwordProblems, verifyAgainstDummy, verifyPassword } from './passwords.js';
import { normalizeEmail } from './secrets.js';
import { SessionsService, type ClientInfo, type TokenPair } from './sessions.service.js';

const VERIFICATION_TTL_MS = 24 * 60 * 60 * 1000;
const RESEND_INTERVAL_SECONDS = 60;
/** A password-reset link lives half an hour; one is mailed at most every minute per address. */
const RESET_TTL_MS = 30 * 60 * 1000;
const RESET_INTERVAL_SECONDS = 60;
/** A sign-up with an address that has an account mails its owner at most once a minute. */
const TAKEN_MAIL_INTERVAL_SECONDS = 60;

export type LoginResult = TokenPair | { totp_required: true; session_token: string };

function uniqueViolation(err: unknown): string | null {
  if (!(err instanceof QueryFailedError)) return null;
  const driver = err.driverError as { code?: string; constraint?: string };
  return driver.code === '23505' ? (driver.constraint ?? '') : null;
}

/** Register, email verification, login and logout of the managed deployment (M1). */
@Injectable()
export class AuthFlowsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly accounts: AccountsRepository,
    private readonly sessions: SessionsService,
    private readonly lifecycle: TenantLifecycle,
    private readonly audit: AuditService,
    private readonly mail: MailService,
    private readonly throttle: LoginThrottle,
    private readonly tickets: LoginTickets,
    private readonly redis: RedisService,
  ) {}

  /**
   * M1: the organization (tenant) and its owner in one transaction; the verification mail after commit.
   * An address that already has an account gets the same answer after the same work (its password hashed,
   * the organization's rows written and undone) and its owner a mail saying someone tried: the answer
   * never tells who has an account. A taken slug is 409 either way (slugs are public: key and SSO addresses).
   */
  async register(input: RegisterDto, client: ClientInfo): Promise<RegistrationAcceptedDto> {
    const problems = passwordProblems(input.password);
    if (problems.length) throw AppError.badRequest('Password does not meet the rules', problems);
    const email = normalizeEmail(input.email);
    const owner = await this.accounts.findByEmail(email);
    const passwordHash = await hashPassword(input.password);
    try {
      if (owner) await this.registerTaken(owner, input, client);
      else await this.registerNew(email, passwordHash, input, client);
    } catch (err) {
      const constraint = uniqueViolation(err);
      if (constraint === 'tenants_slug_key') throw AppError.conflict(`The slug '${input.slug}' is taken`);
      if (constraint !== 'users_email_lower_key') throw err;
      // A concurrent sign-up with this address committed first: answered as the address's owner is.
      const winner = await this.accounts.findByEmail(email);
      if (winner) await this.mailTakenAddress(winner);
    }
    return { email };
  }

  private async registerNew(email: string, passwordHash: string, input: RegisterDto, client: ClientInfo) {
    const { tenantId, token } = await this.ds.transaction(async (m) => {
      const tenant = await this.insertOrganization(m, input);
      const user = await m.save(
        m.create(User, {
          tenant_id: tenant.id,
          email,
          name: input.name?.trim() || null,
          password_hash: passwordHash,
          role: 'owner',
          email_verified: false,
          totp_enabled: false,
          totp_secret: null,
          totp_last_step: null,
        }),
      );
      const token = await this.accounts.issueToken(m, {
        tenant_id: tenant.id,
        kind: 'email_verification',
        email,
        user_id: user.id,
        ttlMs: VERIFICATION_TTL_MS,
      });
      await this.audit.record(m, {
        tenantId: tenant.id,
        action: 'account.register',
        actor: `user:${user.id}`,
        resourceId: user.id,
        ipAddress: client.ip,
        metadata: { slug: tenant.slug },
      });
      return { tenantId: tenant.id, token };
    });
    await this.mail.enqueue(
      verificationMail(tenantId, email, input.organization, this.mail.link('app/verify-email', token)),
    );
  }

  /**
   * A sign-up with an address that has an account: the organization's rows are written and rolled back
   * (so a taken slug is refused as for a new address, and the answer takes as long), nothing is kept but
   * an audit entry in the owner's organization, and the owner is mailed.
   */
  private async registerTaken(owner: User, input: RegisterDto, client: ClientInfo): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query('SAVEPOINT register_taken');
      await this.insertOrganization(m, input);
      await m.query('ROLLBACK TO SAVEPOINT register_taken');
      await this.audit.record(m, {
        tenantId: owner.tenant_id,
        action: 'account.register_existing',
        actor: 'anonymous',
        resourceId: owner.id,
        ipAddress: client.ip,
        metadata: { slug: input.slug },
      });
    });
    await this.mailTakenAddress(owner);
  }

  private async insertOrganization(m: EntityManager, input: RegisterDto): Promise<Tenant> {
    const tenant = await m.save(
      m.create(Tenant, {
        name: input.organization,
        slug: input.slug,
        rate_limit_rpm: this.config.env.RATE_LIMIT_DEFAULT_RPM,
      }),
    );
    await this.lifecycle.tenantCreated(m, tenant);
    return tenant;
  }

  /** "Someone tried to sign up with your address", at most one a minute per account (sign-ups can be repeated). */
  private async mailTakenAddress(owner: User): Promise<void> {
    const set = await this.redis.client.set(
      this.redis.key('register-taken-mail', owner.id),
      '1',
      'EX',
      TAKEN_MAIL_INTERVAL_SECONDS,
      'NX',
    );
    if (set !== 'OK') return;
    await this.mail.enqueue(
      addressTakenMail(
        owner.tenant_id,
        owner.email,
        await this.accounts.organizationName(owner.tenant_id),
        this.mail.page('app/sign-in'),
        this.mail.page('app/forgot-password'),
      ),
    );
  }

  async verifyEmail(token: string, client: ClientInfo): Promise<{ email_verified: true }> {
    const ok = await this.ds.transaction(async (m) => {
      const used = await this.accounts.consumeToken(m, 'email_verification', token);
      if (!used?.user_id) return false;
      await m.update(User, { id: used.user_id, tenant_id: used.tenant_id }, { email_verified: true });
      await this.audit.record(m, {
        tenantId: used.tenant_id,
        action: 'account.email_verified',
        actor: `user:${used.user_id}`,
        resourceId: used.user_id,
        ipAddress: client.ip,
      });
      return true;
    });
    if (!ok) throw AppError.badRequest('Invalid, expired or used token', [{ path: '/token', message: 'not valid' }]);
    return { email_verified: true };
  }

  /** A new link, at most one a minute per user; older links stop working. */
  async resendVerification(tenantId: string, userId: string, client: ClientInfo): Promise<void> {
    const user = await this.accounts.findForTenant(tenantId, userId);
    if (!user) throw AppError.unauthorized();
    if (user.email_verified) throw AppError.invalidState('The email address is already verified');
    const key = this.redis.key('verify-resend', user.id);
    const set = await this.redis.client.set(key, '1', 'EX', RESEND_INTERVAL_SECONDS, 'NX');
    if (set !== 'OK') {
      const ttl = await this.redis.client.ttl(key);
      const error = AppError.of('RATE_LIMITED', 'A verification mail was sent recently');
      throw new AppError(error.status, error.code, error.message, [], { 'Retry-After': String(Math.max(1, ttl)) });
    }
    const token = await this.ds.transaction(async (m) => {
      await this.accounts.retireTokens(m, user.id, 'email_verification');
      const raw = await this.accounts.issueToken(m, {
        tenant_id: tenantId,
        kind: 'email_verification',
        email: user.email,
        user_id: user.id,
        ttlMs: VERIFICATION_TTL_MS,
      });
      await this.audit.record(m, {
        tenantId,
        action: 'account.verification_resent',
        actor: `user:${user.id}`,
        resourceId: user.id,
        ipAddress: client.ip,
      });
      return raw;
    });
    await this.mail.enqueue(
      verificationMail(
        tenantId,
        user.email,
        await this.accounts.organizationName(tenantId),
        this.mail.link('app/verify-email', token),
      ),
    );
  }

  /**
   * Forgot password: mails a single-use link (30 minutes) when the address belongs to an account with a
   * password, at most one a minute per address. The caller always gets the same answer, in about the
   * same time, so it never learns whether the address exists.
   */
  async forgotPassword(input: { email: string }, client: ClientInfo): Promise<void> {
    const email = normalizeEmail(input.email);
    const user = await this.accounts.findByEmail(email);
    if (!user?.password_hash) return;
    const set = await this.redis.client.set(
      this.redis.key('reset-mail', user.id),
      '1',
      'EX',
      RESET_INTERVAL_SECONDS,
      'NX',
    );
    if (set !== 'OK') return;
    const token = await this.ds.transaction(async (m) => {
      await this.accounts.retireTokens(m, user.id, 'password_reset');
      const raw = await this.accounts.issueToken(m, {
        tenant_id: user.tenant_id,
        kind: 'password_reset',
        email: user.email,
        user_id: user.id,
        ttlMs: RESET_TTL_MS,
      });
      await this.audit.record(m, {
        tenantId: user.tenant_id,
        action: 'account.password_reset_requested',
        actor: `user:${user.id}`,
        resourceId: user.id,
        ipAddress: client.ip,
      });
      return raw;
    });
    await this.mail.enqueue(
      passwordResetMail(
        user.tenant_id,
        user.email,
        await this.accounts.organizationName(user.tenant_id),
        this.mail.link('app/reset-password', token),
      ),
    );
  }

  /** The link's token and a new password: the password changes and every session of the user ends. */
  async resetPassword(input: { token: string; password: string }, client: ClientInfo): Promise<void> {
    const problems = passwordProblems(input.password);
    if (problems.length) throw AppError.badRequest('Password does not meet the rules', problems);
    const hash = await hashPassword(input.password);
    const ok = await this.ds.transaction(async (m) => {
      const used = await this.accounts.consumeToken(m, 'password_reset', input.token);
      if (!used?.user_id) return false;
      await m.update(User, { id: used.user_id, tenant_id: used.tenant_id }, { password_hash: hash });
      const ended = await this.sessions.revokeAllOfUser(m, used.user_id);
      await this.audit.record(m, {
        tenantId: used.tenant_id,
        action: 'account.password_reset',
        actor: `user:${used.user_id}`,
        resourceId: used.user_id,
        ipAddress: client.ip,
        metadata: { sessions_revoked: ended.length },
      });
      return true;
    });
    if (!ok) throw AppError.badRequest('Invalid, expired or used token', [{ path: '/token', message: 'not valid' }]);
  }

  /**
   * M1: one answer for an unknown address and a wrong password, after the same argon2 work (a dummy
   * hash stands in for the missing account). Failures count per account and per address.
   */
  async login(input: LoginDto, client: ClientInfo): Promise<LoginResult> {
    const email = normalizeEmail(input.email);
    const address = client.ip ?? 'unknown';
    await this.throttle.assertAllowed(email, address);
    const user = await this.accounts.findByEmail(email);
    const ok = user?.password_hash
      ? await verifyPassword(user.password_hash, input.password)
      : await verifyAgainstDummy(input.password);
    if (!user || !ok) {
      await this.throttle.recordFailure(email, address);
      await this.audit.record(this.ds.manager, {
        tenantId: user?.tenant_id ?? null,
        action: 'login.failed',
        actor: user ? `user:${user.id}` : 'anonymous',
        resourceId: user?.id ?? null,
        ipAddress: client.ip,
        metadata: { reason: user ? 'wrong_password' : 'unknown_account' },
      });
      throw AppError.unauthorized('Invalid email or password');
    }
    if (user.totp_enabled) {
      const sessionToken = await this.tickets.issue({ userId: user.id, tenantId: user.tenant_id });
      await this.audit.record(this.ds.manager, {
        tenantId: user.tenant_id,
        action: 'login.totp_required',
        actor: `user:${user.id}`,
        resourceId: user.id,
        ipAddress: client.ip,
      });
      return { totp_required: true, session_token: sessionToken };
    }
    return this.completeLogin(user, client, 'password');
  }

  /** Opens the session and audits the login in one transaction (the caller's, when it passes one). */
  completeLogin(
    user: User,
    client: ClientInfo,
    method: 'password' | 'totp' | 'recovery_code',
    manager?: EntityManager,
  ): Promise<TokenPair> {
    const run = async (m: EntityManager) => {
      const tokens = await this.sessions.open(m, user, client);
      await this.audit.record(m, {
        tenantId: user.tenant_id,
        action: 'login',
        actor: `user:${user.id}`,
        resourceId: user.id,
        ipAddress: client.ip,
        metadata: { method },
      });
      return tokens;
    };
    return manager ? run(manager) : this.ds.transaction(run);
  }

  async logout(tenantId: string, userId: string, sessionId: string, client: ClientInfo): Promise<void> {
    await this.ds.transaction(async (m) => {
      await this.sessions.revoke(m, sessionId, tenantId);
      await this.audit.record(m, {
        tenantId,
        action: 'logout',
        actor: `user:${userId}`,
        resourceId: sessionId,
        ipAddress: client.ip,
      });
    });
  }

  /** The web front end's logout by its session cookie; an unknown or ended token ends nothing. */
  async logoutByRefreshToken(rawToken: string, client: ClientInfo): Promise<void> {
    await this.ds.transaction(async (m) => {
      const ended = await this.sessions.revokeByRefreshToken(m, rawToken);
      if (!ended) return;
      await this.audit.record(m, {
        tenantId: ended.tenant_id,
        action: 'logout',
        actor: `user:${ended.user_id}`,
        resourceId: ended.id,
        ipAddress: client.ip,
      });
    });
  }

  /** Ends one session of the user's own (none of another user's); false when there is no such active session. */
  async endOwnSession(tenantId: string, userId: string, sessionId: string, client: ClientInfo): Promise<boolean> {
    return this.ds.transaction(async (m) => {
      const done = await this.sessions.revokeOwn(m, tenantId, userId, sessionId);
      if (done) {
        await this.audit.record(m, {
          tenantId,
          action: 'session.revoke',
          actor: `user:${userId}`,
          resourceId: sessionId,
          ipAddress: client.ip,
        });
      }
      return done;
    });
  }

  /** "Log out everywhere": every session of the user ends, `currentSessionId` included. */
  async endAllSessions(tenantId: string, userId: string, currentSessionId: string, client: ClientInfo): Promise<void> {
    await this.ds.transaction(async (m) => {
      const ended = await this.sessions.revokeAllOfUser(m, userId);
      await this.audit.record(m, {
        tenantId,
        action: 'session.revoke_all',
        actor: `user:${userId}`,
        resourceId: currentSessionId,
        ipAddress: client.ip,
        metadata: { sessions_revoked: ended.length },
      });
    });
  }
}
