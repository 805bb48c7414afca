import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service.js';
import { SessionRevocations } from '../auth/session-revocations.js';
import { signTenantToken } from '../auth/tokens.js';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { Session } from './entities/session.entity.js';
import { User } from './entities/user.entity.js';
import { randomToken, sha256Hex, successorToken } from './secrets.js';

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

/**
 * Sessions (SDF-SPEC Session): each holds one refresh token (256-bit random, stored as SHA-256) with an
 * absolute expiry. A refresh revokes the session and creates its successor with the same expiry; a
 * revoked token presented again revokes every session of that user (M1). Revocation reaches access tokens
 * through SessionRevocations, which the authentication step checks on every request.
 *
 * The web front end's cookie renewal may be cut off by a page load after the service rotated but before
 * the browser stored the new cookie; the next page then presents the previous token. For that path only,
 * `repeatWithinMs` answers the immediately previous token of a rotation, for that long after it, with its
 * still active successor instead of taking it as a stolen copy. A successor's refresh token is an HMAC of
 * its predecessor's (`successorToken`), so the service can answer it again without storing it.
 */
@Injectable()
export class SessionsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(AppConfig) private readonly config: AppConfig,
    private readonly revocations: SessionRevocations,
    private readonly audit: AuditService,
  ) {}

  /** A new session and its tokens, inside the caller's transaction. */
  async open(
    m: EntityManager,
    user: User,
    client: ClientInfo,
    expiresAt?: Date,
    refresh: string = randomToken(),
    signedInAt?: Date,
  ): Promise<TokenPair> {
    const session = await m.save(
      m.create(Session, {
        tenant_id: user.tenant_id,
        user_id: user.id,
        refresh_token_hash: sha256Hex(refresh),
        expires_at: expiresAt ?? new Date(Date.now() + this.config.env.REFRESH_TOKEN_TTL_DAYS * 86_400_000),
        revoked_at: null,
        ip_address: client.ip,
        user_agent: client.userAgent?.slice(0, 512) ?? null,
        ...(signedInAt ? { signed_in_at: signedInAt } : {}),
      }),
    );
    return this.pair(user, session.id, refresh);
  }

  private pair(user: User, sessionId: string, refresh: string): TokenPair {
    const ttl = this.config.tenantTokenTtlSeconds;
    const access = signTenantToken(
      this.config.secrets.jwtSecret,
      { tenant_id: user.tenant_id, sub: user.id, sid: sessionId, role: user.role, unverified: !user.email_verified },
      ttl,
    );
    return { access_token: access, refresh_token: refresh, expires_in: ttl, token_type: 'Bearer' };
  }

  /**
   * Rotation. The conditional UPDATE is the race's referee: of two requests with one token, the
   * second waits on the row lock, then finds it revoked and takes the reuse path. So exactly one
   * succeeds, and the reuse revokes the winner's new session too (the token was presented twice) —
   * unless `repeatWithinMs` is given (the cookie renewal): then a token rotated at most that long ago
   * whose successor is still active is answered with that successor (a new access token, the same
   * refresh token). Its successor already rotated, or the window passed: the reuse path as ever.
   */
  async refresh(rawToken: string, client: ClientInfo, repeatWithinMs = 0): Promise<TokenPair> {
    const hash = sha256Hex(rawToken);
    const outcome = await this.ds.transaction(async (m) => {
      const rows = (await m.query(
        `UPDATE sessions SET revoked_at = now()
          WHERE refresh_token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
          RETURNING id, user_id, tenant_id, expires_at, signed_in_at`,
        [hash],
      )) as [{ id: string; user_id: string; tenant_id: string; expires_at: Date; signed_in_at: Date }[], number];
      const rotated = rows[0][0];
      if (rotated) {
        const user = await m.findOne(User, { where: { id: rotated.user_id, tenant_id: rotated.tenant_id } });
        if (!user) return { kind: 'refused' as const };
        // The cookie renewal: the predecessor's access tokens last out the repeat window, so a request that
        // another tab sent with one just before this rotation is not refused (its tab adopts the successor).
        await this.revocations.revoke([rotated.id], repeatWithinMs);
        const successor = successorToken(this.config.secrets.jwtSecret, rawToken);
        const tokens = await this.open(
          m,
          user,
          client,
          new Date(rotated.expires_at),
          successor,
          new Date(rotated.signed_in_at),
        );
        await this.audit.record(m, {
          tenantId: user.tenant_id,
          action: 'session.refresh',
          actor: `user:${user.id}`,
          resourceId: rotated.id,
          ipAddress: client.ip,
        });
        return { kind: 'ok' as const, tokens };
      }
      const known = await m.findOne(Session, { where: { refresh_token_hash: hash } });
      if (!known?.revoked_at) return { kind: 'refused' as const };
      if (repeatWithinMs > 0) {
        const successor = successorToken(this.config.secrets.jwtSecret, rawToken);
        // The successor of this very token (its hash is bound to it), active, rotated from it moments ago.
        const rows = (await m.query(
          `SELECT s.id FROM sessions s
            WHERE s.refresh_token_hash = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()
              AND $3::timestamptz > now() - make_interval(secs => $4::double precision / 1000)`,
          [sha256Hex(successor), known.user_id, known.revoked_at, repeatWithinMs],
        )) as { id: string }[];
        const user = rows[0]
          ? await m.findOne(User, { where: { id: known.user_id, tenant_id: known.tenant_id } })
          : null;
        if (rows[0] && user) {
          await this.audit.record(m, {
            tenantId: user.tenant_id,
            action: 'session.refresh_repeat',
            actor: `user:${user.id}`,
            resourceId: known.id,
            ipAddress: client.ip,
          });
          return { kind: 'ok' as const, tokens: this.pair(user, rows[0].id, successor) };
        }
      }
      // Presented after its rotation or revocation: someone else may hold it. End every session.
      const ended = await this.revokeAllOfUser(m, known.user_id);
      await this.audit.record(m, {
        tenantId: known.tenant_id,
        action: 'session.refresh_reuse',
        actor: `user:${known.user_id}`,
        resourceId: known.id,
        ipAddress: client.ip,
        metadata: { sessions_revoked: ended.length },
      });
      return { kind: 'refused' as const };
    });
    if (outcome.kind === 'ok') return outcome.tokens;
    throw AppError.unauthorized('Invalid, expired or revoked refresh token');
  }

  /** The web front end's cookie renewal: a rotation that a page load cut off may be repeated (see refresh). */
  refreshCookie(rawToken: string, client: ClientInfo): Promise<TokenPair> {
    return this.refresh(rawToken, client, this.config.env.SESSION_REFRESH_REPEAT_MS);
  }

  /** The user's active sessions (neither revoked nor expired), the most recently used first. */
  async listActive(tenantId: string, userId: string): Promise<Session[]> {
    return this.ds.manager
      .createQueryBuilder(Session, 's')
      .where('s.tenant_id = :tenantId AND s.user_id = :userId', { tenantId, userId })
      .andWhere('s.revoked_at IS NULL AND s.expires_at > now()')
      .orderBy('s.created_at', 'DESC')
      .limit(200)
      .getMany();
  }

  /** Revokes one session of this user; false when it is not theirs or already over. */
  async revokeOwn(m: EntityManager, tenantId: string, userId: string, sessionId: string): Promise<boolean> {
    const rows = (await m.query(
      `UPDATE sessions SET revoked_at = now()
        WHERE id = $1 AND tenant_id = $2 AND user_id = $3 AND revoked_at IS NULL AND expires_at > now()
        RETURNING id`,
      [sessionId, tenantId, userId],
    )) as [{ id: string }[], number];
    if (rows[0].length === 0) return false;
    await this.revocations.revoke([sessionId]);
    return true;
  }

  /**
   * The cookie logout: ends the session a refresh token belongs to, if it is still active. The token is
   * not rotated here, so a stale one is no reuse: it simply ends nothing.
   */
  async revokeByRefreshToken(
    m: EntityManager,
    rawToken: string,
  ): Promise<{ id: string; user_id: string; tenant_id: string } | null> {
    const rows = (await m.query(
      `UPDATE sessions SET revoked_at = now()
        WHERE refresh_token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
        RETURNING id, user_id, tenant_id`,
      [sha256Hex(rawToken)],
    )) as [{ id: string; user_id: string; tenant_id: string }[], number];
    const ended = rows[0][0] ?? null;
    if (ended) await this.revocations.revoke([ended.id]);
    return ended;
  }

  /** Revokes one session (logout); its access tokens fail from the next request on. */
  async revoke(m: EntityManager, sessionId: string, tenantId: string): Promise<boolean> {
    const rows = (await m.query(
      `UPDATE sessions SET revoked_at = now() WHERE id = $1 AND tenant_id = $2 AND revoked_at IS NULL RETURNING id`,
      [sessionId, tenantId],
    )) as [{ id: string }[], number];
    await this.revocations.revoke([sessionId]);
    return rows[0].length > 0;
  }

  /** Revokes every active session of a user (but `keep`), returning the ids it ended. */
  async revokeAllOfUser(m: EntityManager, userId: string, keep?: string): Promise<string[]> {
    const rows = (await m.query(
      `UPDATE sessions SET revoked_at = now()
        WHERE user_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR id <> $2::uuid)
        RETURNING id`,
      [userId, keep ?? null],
    )) as [{ id: string }[], number];
    const ids = rows[0].map((r) => r.id);
    // Predecessors rotated within the repeat window still answer their access tokens: end those at once too.
    const recent = (await m.query(
      `SELECT id FROM sessions
        WHERE user_id = $1 AND revoked_at > now() - make_interval(secs => $2::double precision / 1000)
          AND ($3::uuid IS NULL OR id <> $3::uuid)`,
      [userId, this.config.env.SESSION_REFRESH_REPEAT_MS, keep ?? null],
    )) as { id: string }[];
    // Before the commit on purpose: a failed commit leaves sessions refused, never the reverse.
    await this.revocations.revoke([...new Set([...ids, ...recent.map((r) => r.id)])]);
    return ids;
  }
}
