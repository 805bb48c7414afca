import { randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import { MailService } from '../email/mail.service.js';
import { AccountsRepository } from './accounts.repository.js';
import { AuthFlowsService } from './auth-flows.service.js';
import type { TotpSetupDto } from './dto/totp.dto.js';
import { RecoveryCode } from './entities/recovery-code.entity.js';
import { User } from './entities/user.entity.js';
import { LoginTickets } from './login-tickets.js';
import { totpLockedMail } from './mails.js';
import { sha256Hex } from './secrets.js';
import type { ClientInfo, TokenPair } from './sessions.service.js';
import { TotpAttempts } from './totp-attempts.js';

const ISSUER = 'SDF';
const PERIOD_SECONDS = 30;
const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const TOTP_CODE = /^\d{6}$/;

/** The AES-GCM associated data binds a sealed secret to its user: a row copied to another user fails. */
const aad = (userId: string) => `totp:${userId}`;

function newRecoveryCode(): string {
  let raw = '';
  for (let i = 0; i < 10; i++) raw += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

const recoveryHash = (code: string) => sha256Hex(code.trim().toLowerCase().replace(/-/g, ''));

/**
 * TOTP (M1), RFC 6238 through otplib: 6 digits, 30 s, one step of drift either way. A code is
 * accepted once: the last accepted time step is stored and only later steps pass (a conditional
 * UPDATE, so two requests with one code cannot both win). Ten recovery codes stand in for a code once each.
 */
@Injectable()
export class TotpService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly box: CryptoBox,
    private readonly accounts: AccountsRepository,
    private readonly flows: AuthFlowsService,
    private readonly tickets: LoginTickets,
    private readonly audit: AuditService,
    private readonly attempts: TotpAttempts,
    private readonly mail: MailService,
  ) {}

  async setup(tenantId: string, userId: string, client: ClientInfo): Promise<TotpSetupDto> {
    return this.ds.transaction(async (m) => {
      const user = await this.accounts.requireForTenant(tenantId, userId, m, true);
      if (user.totp_enabled) throw AppError.invalidState('Two-factor authentication is already enabled');
      const secret = generateSecret();
      user.totp_secret = this.box.encrypt(secret, aad(user.id));
      user.totp_last_step = null;
      await m.save(user);
      await this.record(m, user, 'totp.setup', client);
      const otpauthUrl = generateURI({ issuer: ISSUER, label: user.email, secret, period: PERIOD_SECONDS });
      return { secret, otpauth_url: otpauthUrl, qr_svg: await QRCode.toString(otpauthUrl, { type: 'svg' }) };
    });
  }

  async enable(
    tenantId: string,
    userId: string,
    code: string,
    client: ClientInfo,
  ): Promise<{ recovery_codes: string[] }> {
    const codes = await this.ds.transaction(async (m) => {
      const user = await this.accounts.requireForTenant(tenantId, userId, m, true);
      if (user.totp_enabled) throw AppError.invalidState('Two-factor authentication is already enabled');
      if (!user.totp_secret) throw AppError.invalidState('Call /v1/auth/totp/setup first');
      if (!(await this.acceptTotp(m, user, code))) return null;
      await m.update(User, { id: user.id }, { totp_enabled: true });
      await m.delete(RecoveryCode, { user_id: user.id });
      const fresh = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
      await m.insert(
        RecoveryCode,
        fresh.map((c) => ({ tenant_id: user.tenant_id, user_id: user.id, code_hash: recoveryHash(c), used_at: null })),
      );
      await this.record(m, user, 'totp.enable', client);
      return fresh;
    });
    if (!codes) throw AppError.unauthorized('Invalid code');
    return { recovery_codes: codes };
  }

  async disable(tenantId: string, userId: string, code: string, client: ClientInfo): Promise<void> {
    const ok = await this.ds.transaction(async (m) => {
      const user = await this.accounts.requireForTenant(tenantId, userId, m, true);
      if (!user.totp_enabled) throw AppError.invalidState('Two-factor authentication is not enabled');
      if (!(await this.acceptCode(m, user, code))) return false;
      await m.update(User, { id: user.id }, { totp_enabled: false, totp_secret: null, totp_last_step: null });
      await m.delete(RecoveryCode, { user_id: user.id });
      await this.record(m, user, 'totp.disable', client);
      return true;
    });
    if (!ok) throw AppError.unauthorized('Invalid code');
  }

  /** Second step of a login that answered `totp_required`: a TOTP or a recovery code, then tokens. */
  async validate(sessionToken: string, code: string, client: ClientInfo): Promise<TokenPair> {
    // Every try is counted before its code is checked: on the ticket (five in all) and, for TOTP codes,
    // on the account across tickets (a backoff, then the lock). A recovery code is far too long to
    // guess, so it is always heard: it is how a locked user gets in.
    const ticket = await this.tickets.tryOnce(sessionToken);
    if (!ticket) throw AppError.unauthorized('Invalid or expired session token');
    const isTotp = TOTP_CODE.test(code);
    const tried = isTotp ? await this.attempts.begin(ticket.userId) : null;
    if (tried && !tried.allowed) {
      const error = AppError.of('RATE_LIMITED', 'Too many wrong codes; wait before trying again');
      throw new AppError(error.status, error.code, error.message, [], {
        'Retry-After': String(Math.max(1, Math.ceil(tried.retryAfterMs / 1000))),
      });
    }
    const outcome = await this.ds.transaction(async (m) => {
      const user = await this.accounts.findForTenant(ticket.tenantId, ticket.userId, m, true);
      if (!user?.totp_enabled) return null;
      if (isTotp && user.totp_locked_at) return { kind: 'locked' } as const;
      const method = await this.acceptCode(m, user, code);
      if (!method) {
        await this.record(m, user, 'login.totp_failed', client);
        return { kind: 'wrong', user } as const;
      }
      // The ticket goes with the first good code; a second request with the same ticket finds it gone.
      if (!(await this.tickets.consume(sessionToken))) throw AppError.unauthorized('Invalid or expired session token');
      if (user.totp_locked_at) {
        await m.update(User, { id: user.id }, { totp_locked_at: null });
        await this.record(m, user, 'totp.unlocked', client);
      }
      // The used step or recovery code, the session and the login entry commit together.
      return { kind: 'ok', tokens: await this.flows.completeLogin(user, client, method, m) } as const;
    });
    if (!outcome) throw AppError.unauthorized('Invalid or expired session token');
    if (outcome.kind === 'locked') throw locked();
    if (outcome.kind === 'wrong') {
      if (tried?.allowed && tried.tries >= this.attempts.lockAfter) {
        await this.lock(outcome.user, tried.tries, client);
        throw locked();
      }
      throw AppError.unauthorized('Invalid code');
    }
    await this.attempts.forget(ticket.userId);
    return outcome.tokens;
  }

  /** Locks the second factor once (a conditional update), audits it and tells the user by mail. */
  private async lock(user: User, tries: number, client: ClientInfo): Promise<void> {
    const locked = await this.ds.transaction(async (m) => {
      const [rows] = (await m.query(
        `UPDATE users SET totp_locked_at = now() WHERE id = $1 AND totp_locked_at IS NULL RETURNING id`,
        [user.id],
      )) as [unknown[], number];
      if (!rows.length) return false;
      await this.audit.record(m, {
        tenantId: user.tenant_id,
        action: 'totp.locked',
        actor: 'system:totp',
        resourceId: user.id,
        ipAddress: client.ip,
        metadata: { wrong_codes: tries },
      });
      return true;
    });
    // The lock holds in the database now; the count starts over, so a locked user's next try meets the
    // lock (403, a recovery code still heard) rather than a backoff.
    await this.attempts.forget(user.id);
    if (locked) {
      const organization = await this.accounts.organizationName(user.tenant_id);
      await this.mail.enqueue(totpLockedMail(user.tenant_id, user.email, organization, this.mail.page('app/sign-in')));
    }
  }

  /** A 6-digit TOTP code, else a recovery code. */
  private async acceptCode(m: EntityManager, user: User, code: string): Promise<'totp' | 'recovery_code' | null> {
    if (TOTP_CODE.test(code)) return (await this.acceptTotp(m, user, code)) ? 'totp' : null;
    const rows = (await m.query(
      `UPDATE totp_recovery_codes SET used_at = now()
        WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id`,
      [user.id, recoveryHash(code)],
    )) as [{ id: string }[], number];
    return rows[0].length > 0 ? 'recovery_code' : null;
  }

  private async acceptTotp(m: EntityManager, user: User, code: string): Promise<boolean> {
    if (!TOTP_CODE.test(code) || !user.totp_secret) return false;
    const secret = this.box.decryptString(user.totp_secret, aad(user.id));
    const last = user.totp_last_step === null ? undefined : Number(user.totp_last_step);
    const result = await verify({
      secret,
      token: code,
      period: PERIOD_SECONDS,
      epochTolerance: PERIOD_SECONDS,
      ...(last !== undefined ? { afterTimeStep: last } : {}),
    });
    if (!result.valid || !('timeStep' in result)) return false;
    const rows = (await m.query(
      `UPDATE users SET totp_last_step = $2
        WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`,
      [user.id, result.timeStep],
    )) as [{ id: string }[], number];
    return rows[0].length > 0;
  }

  private record(m: EntityManager, user: User, action: string, client: ClientInfo): Promise<void> {
    return this.audit.record(m, {
      tenantId: user.tenant_id,
      action,
      actor: `user:${user.id}`,
      resourceId: user.id,
      ipAddress: client.ip,
    });
  }
}

function locked(): AppError {
  return AppError.of(
    'TOTP_LOCKED',
    'Two-factor sign-in is locked after too many wrong codes: sign in with one of your recovery codes instead',
  );
}
