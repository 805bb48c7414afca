import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { AppError } from '../common/errors.js';
import { requestContext } from '../common/request-context.js';
import { MailService } from '../email/mail.service.js';
import { LoginThrottle } from './login-throttle.js';
import { sha256Hex } from './secrets.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { AccountsRepository } from './accounts.repository.js';
import type { RegisteredDto } from './dto/auth.dto.js';
import { InvitationDto, MemberDto, OrganizationDto, type TeamDto, type UpdateProfileDto } from './dto/account.dto.js';
import { AccountToken } from './entities/account-token.entity.js';
import { User, type UserRole } from './entities/user.entity.js';
import { invitationMail, invitationToAccountHolderMail } from './mails.js';
import { hashPassword, passwordProblems, verifyPassword } from './passwords.js';
import { normalizeEmail } from './secrets.js';
import { SessionsService, type ClientInfo } from './sessions.service.js';

const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The signed-in user behind a /v1 request. */
export interface Caller {
  tenantId: string;
  userId: string;
  sessionId: string;
  client: ClientInfo;
}

const MANAGERS: readonly UserRole[] = ['owner', 'admin'];

/**
 * Organization, profile and team (M2). Roles are read from the database on every request (a token's
 * `role` claim may be up to 15 minutes old). There is exactly one owner: the schema forbids a second,
 * and demoting or removing the owner is 409; ownership moves only by transfer.
 */
@Injectable()
export class AccountService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly mail: MailService,
    private readonly throttle: LoginThrottle,
  ) {}

  /** The caller's row; a user removed since the token was issued is 401. */
  async caller(c: Caller, m?: EntityManager): Promise<User> {
    const user = await this.accounts.findForTenant(c.tenantId, c.userId, m);
    if (!user) throw AppError.unauthorized('Unknown user');
    return user;
  }

  /** Owner or admin, else 403; `verified` adds the email verification requirement (M1). */
  async manager(c: Caller, opts: { verified?: boolean } = {}, m?: EntityManager): Promise<User> {
    const user = await this.caller(c, m);
    if (!MANAGERS.includes(user.role)) throw AppError.forbidden('Only the owner or an admin may do this');
    if (opts.verified && !user.email_verified) {
      throw new AppError(403, 'EMAIL_NOT_VERIFIED', 'Verify your email address first');
    }
    return user;
  }

  async organization(c: Caller): Promise<OrganizationDto> {
    await this.caller(c);
    const tenant = await this.ds.manager.findOneOrFail(Tenant, { where: { id: c.tenantId } });
    return OrganizationDto.from(tenant);
  }

  async renameOrganization(c: Caller, name: string): Promise<OrganizationDto> {
    return this.ds.transaction(async (m) => {
      await this.manager(c, {}, m);
      const tenant = await m.findOneOrFail(Tenant, { where: { id: c.tenantId }, lock: { mode: 'pessimistic_write' } });
      if (tenant.name !== name) {
        const before = tenant.name;
        tenant.name = name;
        await m.save(tenant);
        await this.record(m, c, 'organization.update', tenant.id, { name: { from: before, to: name } });
      }
      return OrganizationDto.from(tenant);
    });
  }

  async profile(c: Caller): Promise<MemberDto> {
    return MemberDto.from(await this.caller(c));
  }

  /**
   * The profile: a new display name, and/or a new password. A password change needs the current password
   * and ends the user's other sessions.
   */
  async updateProfile(c: Caller, input: UpdateProfileDto): Promise<MemberDto> {
    const changingPassword = input.new_password !== undefined || input.current_password !== undefined;
    if (input.name === undefined && !changingPassword) {
      throw AppError.badRequest('Nothing to change: send name, or current_password with new_password', [
        { path: '/', message: 'name or new_password is required' },
      ]);
    }
    if (changingPassword) {
      if (input.current_password === undefined) {
        throw AppError.badRequest('The current password is required to change it', [
          { path: '/current_password', message: 'required with new_password' },
        ]);
      }
      if (input.new_password === undefined) {
        throw AppError.badRequest('The new password is missing', [
          { path: '/new_password', message: 'required with current_password' },
        ]);
      }
    }
    const name = input.name === undefined ? undefined : input.name?.trim() || null;
    let hash: string | undefined;
    if (changingPassword) {
      const next = input.new_password as string;
      const problems = passwordProblems(next, '/new_password');
      if (problems.length) throw AppError.badRequest('Password does not meet the rules', problems);
      const user = await this.caller(c);
      // Guesses of the current password with a stolen access token count like failed logins: per account
      // (keyed by the user, apart from the login counter of the address) and per client address.
      const account = `password-change:${user.id}`;
      const address = c.client.ip ?? 'unknown';
      await this.throttle.assertAllowed(account, address);
      if (!user.password_hash || !(await verifyPassword(user.password_hash, input.current_password as string))) {
        await this.throttle.recordFailure(account, address);
        throw AppError.badRequest('The current password is wrong', [{ path: '/current_password', message: 'wrong' }]);
      }
      hash = await hashPassword(next);
    }
    return this.ds.transaction(async (m) => {
      const user = await this.caller(c, m);
      if (name !== undefined && name !== user.name) {
        await m.update(User, { id: user.id, tenant_id: c.tenantId }, { name });
        await this.record(m, c, 'profile.update', user.id, { changed: ['name'] });
      }
      if (hash !== undefined) {
        await m.update(User, { id: user.id, tenant_id: c.tenantId }, { password_hash: hash });
        const ended = await this.sessions.revokeAllOfUser(m, user.id, c.sessionId);
        await this.record(m, c, 'profile.password_change', user.id, { sessions_revoked: ended.length });
      }
      return MemberDto.from(await this.accounts.requireForTenant(c.tenantId, user.id, m));
    });
  }

  async team(c: Caller): Promise<TeamDto> {
    await this.manager(c);
    const [members, invitations] = await Promise.all([
      this.accounts.listForTenant(c.tenantId),
      this.ds.manager
        .createQueryBuilder(AccountToken, 'i')
        .where('i.tenant_id = :tenant AND i.kind = :kind AND i.used_at IS NULL AND i.expires_at > now()', {
          tenant: c.tenantId,
          kind: 'invitation',
        })
        .orderBy('i.created_at', 'ASC')
        .getMany(),
    ]);
    return {
      members: members.map((u) => MemberDto.from(u)),
      invitations: invitations.map((i) => InvitationDto.from(i)),
    };
  }

  async invite(c: Caller, email: string, role: 'admin' | 'member'): Promise<InvitationDto> {
    const address = normalizeEmail(email);
    // An account elsewhere is not said to the manager (that would tell anyone who can invite which addresses
    // have accounts): the invitation is made as for a new address, and the mail tells the address's owner
    // why it cannot be accepted. Looked up across organizations, outside this one's row-level scope.
    const held = await requestContext.run({ requestId: 'invitation-address' }, () =>
      this.accounts.findByEmail(address),
    );
    const { invitation, token, organization } = await this.ds.transaction(async (m) => {
      await this.manager(c, { verified: true }, m);
      // A member of this organization is in its own team list: saying so tells the manager nothing new.
      if (held?.tenant_id === c.tenantId)
        throw AppError.conflict('This address is already a member of your organization');
      const tenant = await m.findOneOrFail(Tenant, { where: { id: c.tenantId } });
      const raw = await this.accounts.issueToken(m, {
        tenant_id: c.tenantId,
        kind: 'invitation',
        email: address,
        role,
        created_by: `user:${c.userId}`,
        ttlMs: INVITATION_TTL_MS,
      });
      const row = await m.findOneOrFail(AccountToken, {
        where: { tenant_id: c.tenantId, kind: 'invitation', email: address },
        order: { created_at: 'DESC' },
      });
      await this.record(m, c, 'team.invite', row.id, { email: address, role });
      return { invitation: InvitationDto.from(row), token: raw, organization: tenant.name };
    });
    await this.mail.enqueue(this.invitationMailFor(c.tenantId, address, organization, token, held !== null));
    return invitation;
  }

  /** Open invitations of the organization, oldest first, with who sent them. */
  async invitations(c: Caller): Promise<InvitationDto[]> {
    await this.manager(c);
    const rows = await this.ds.manager
      .createQueryBuilder(AccountToken, 'i')
      .where('i.tenant_id = :tenant AND i.kind = :kind AND i.used_at IS NULL AND i.expires_at > now()', {
        tenant: c.tenantId,
        kind: 'invitation',
      })
      .orderBy('i.created_at', 'ASC')
      .getMany();
    return rows.map((i) => InvitationDto.from(i));
  }

  /** Sends an open invitation again with a new link (the old one dies) and a fresh expiry. */
  async resendInvitation(c: Caller, invitationId: string): Promise<InvitationDto> {
    const { invitation, token, organization } = await this.ds.transaction(async (m) => {
      const me = await this.manager(c, {}, m);
      const old = await this.openInvitation(m, c.tenantId, invitationId);
      if (!me.email_verified) throw new AppError(403, 'EMAIL_NOT_VERIFIED', 'Verify your email address first');
      await m.update(AccountToken, { id: old.id }, { used_at: new Date() });
      const raw = await this.accounts.issueToken(m, {
        tenant_id: c.tenantId,
        kind: 'invitation',
        email: old.email,
        role: old.role,
        created_by: `user:${c.userId}`,
        ttlMs: INVITATION_TTL_MS,
      });
      const row = await m.findOneOrFail(AccountToken, { where: { token_hash: sha256Hex(raw) } });
      const tenant = await m.findOneOrFail(Tenant, { where: { id: c.tenantId } });
      await this.record(m, c, 'team.invitation_resend', row.id, { email: row.email, replaces: old.id });
      return { invitation: InvitationDto.from(row), token: raw, organization: tenant.name };
    });
    const held = await requestContext.run({ requestId: 'invitation-address' }, () =>
      this.accounts.findByEmail(invitation.email),
    );
    await this.mail.enqueue(this.invitationMailFor(c.tenantId, invitation.email, organization, token, held !== null));
    return invitation;
  }

  /**
   * The invitation's mail: its link, or, for an address that has an account in another organization (an
   * account belongs to one), why it cannot be accepted and what to do instead, with no link.
   */
  private invitationMailFor(tenantId: string, to: string, organization: string, token: string, held: boolean) {
    return held
      ? invitationToAccountHolderMail(tenantId, to, organization, this.mail.page('app/sign-in'))
      : invitationMail(tenantId, to, organization, this.mail.link('app/accept-invitation', token));
  }

  /** Cancels an open invitation: its link stops working at once. */
  async cancelInvitation(c: Caller, invitationId: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await this.manager(c, {}, m);
      const open = await this.openInvitation(m, c.tenantId, invitationId);
      await m.update(AccountToken, { id: open.id }, { used_at: new Date() });
      await this.record(m, c, 'team.invitation_cancel', open.id, { email: open.email });
    });
  }

  private async openInvitation(m: EntityManager, tenantId: string, id: string): Promise<AccountToken> {
    const row = await m
      .createQueryBuilder(AccountToken, 'i')
      .setLock('pessimistic_write')
      .where('i.id = :id AND i.tenant_id = :tenant AND i.kind = :kind', { id, tenant: tenantId, kind: 'invitation' })
      .andWhere('i.used_at IS NULL AND i.expires_at > now()')
      .getOne();
    if (!row) throw AppError.notFound('Invitation');
    return row;
  }

  /** Public: the token from the mail and a password make the account (the mail proved the address). */
  async acceptInvitation(token: string, password: string, client: ClientInfo, name?: string): Promise<RegisteredDto> {
    const problems = passwordProblems(password);
    if (problems.length) throw AppError.badRequest('Password does not meet the rules', problems);
    const hash = await hashPassword(password);
    try {
      const result = await this.ds.transaction(async (m) => {
        const invitation = await this.accounts.consumeToken(m, 'invitation', token);
        if (!invitation) return null;
        // Every other open invitation of this address to this organization dies with this one.
        await this.accounts.retireInvitations(m, invitation.tenant_id, { email: invitation.email });
        const user = await m.save(
          m.create(User, {
            tenant_id: invitation.tenant_id,
            email: invitation.email,
            name: name?.trim() || null,
            password_hash: hash,
            role: invitation.role ?? 'member',
            email_verified: true,
            totp_enabled: false,
            totp_secret: null,
            totp_last_step: null,
          }),
        );
        const tenant = await m.findOneOrFail(Tenant, { where: { id: invitation.tenant_id } });
        await this.audit.record(m, {
          tenantId: tenant.id,
          action: 'team.join',
          actor: `user:${user.id}`,
          resourceId: user.id,
          ipAddress: client.ip,
          metadata: { invitation_id: invitation.id, invited_by: invitation.created_by, role: user.role },
        });
        return {
          user: { id: user.id, email: user.email, role: user.role },
          organization: { id: tenant.id, name: tenant.name, slug: tenant.slug },
        };
      });
      if (!result) {
        if (await this.accounts.tokenExists('invitation', token)) {
          throw AppError.of(
            'INVITATION_GONE',
            'This invitation was used, cancelled or has expired; ask the organization for a new one',
            [{ path: '/token', message: 'no longer valid' }],
          );
        }
        throw AppError.badRequest('Invalid, expired or used invitation', [{ path: '/token', message: 'not valid' }]);
      }
      return result;
    } catch (err) {
      if (err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505') {
        throw AppError.conflict('An account with this email already exists');
      }
      throw err;
    }
  }

  async changeRole(c: Caller, userId: string, role: 'admin' | 'member'): Promise<MemberDto> {
    return this.ds.transaction(async (m) => {
      await this.manager(c, {}, m);
      const target = await this.accounts.requireForTenant(c.tenantId, userId, m, true);
      if (target.role === 'owner') {
        throw AppError.conflict('The owner cannot be demoted; transfer ownership first');
      }
      if (target.role !== role) {
        const before = target.role;
        await m.update(User, { id: target.id }, { role });
        target.role = role;
        await this.record(m, c, 'team.role_change', target.id, { from: before, to: role });
      }
      return MemberDto.from(target);
    });
  }

  /** Removes a member; their sessions end at once. */
  async remove(c: Caller, userId: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await this.manager(c, {}, m);
      const target = await this.accounts.requireForTenant(c.tenantId, userId, m, true);
      if (target.role === 'owner') throw AppError.conflict('The owner cannot be removed; transfer ownership first');
      const ended = await this.sessions.revokeAllOfUser(m, target.id);
      await m.delete(User, { id: target.id, tenant_id: c.tenantId });
      // Open invitations to their address, and those they sent, die with their membership.
      const retired = await this.accounts.retireInvitations(m, c.tenantId, { email: target.email, sentBy: target.id });
      await this.record(m, c, 'team.remove', target.id, {
        email: target.email,
        sessions_revoked: ended.length,
        invitations_retired: retired,
      });
    });
  }

  /** The owner hands ownership to another member, who becomes owner; the former owner becomes admin. */
  async transferOwnership(c: Caller, userId: string): Promise<MemberDto> {
    return this.ds.transaction(async (m) => {
      const me = await this.accounts.requireForTenant(c.tenantId, c.userId, m, true);
      if (me.role !== 'owner') throw AppError.forbidden('Only the owner may transfer ownership');
      if (userId === me.id) throw AppError.invalidState('You are already the owner');
      const target = await this.accounts.requireForTenant(c.tenantId, userId, m, true);
      // In this order: the one-owner index never sees two owners.
      await m.update(User, { id: me.id }, { role: 'admin' });
      await m.update(User, { id: target.id }, { role: 'owner' });
      target.role = 'owner';
      await this.record(m, c, 'team.ownership_transfer', target.id, { from: me.id, to: target.id });
      return MemberDto.from(target);
    });
  }

  private record(m: EntityManager, c: Caller, action: string, resourceId: string, metadata: Record<string, unknown>) {
    return this.audit.record(m, {
      tenantId: c.tenantId,
      action,
      actor: `user:${c.userId}`,
      resourceId,
      ipAddress: c.client.ip,
      metadata,
    });
  }
}
