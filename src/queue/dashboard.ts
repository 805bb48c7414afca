import { createHmac, randomUUID, type KeyObject } from 'node:crypto';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { Application, NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import { hmacKey } from '../common/hmac-key.js';

/**
 * The operators' queue dashboard (bull-board), a plain express mount beside the controllers: it has
 * no route metadata, so the authentication step never sees it, and it guards itself. The way in is a
 * one-time link from `sdf admin dashboard-link`; using it sets a short-lived HttpOnly cookie scoped to
 * this path alone. Without that cookie every request here is 401, whatever other credential it holds.
 */
export const DASHBOARD_PATH = '/admin/queues/dashboard';
export const DASHBOARD_COOKIE = 'sdf_dashboard';
export const DASHBOARD_LINK_TTL_SECONDS = 300;
export const DASHBOARD_SESSION_TTL_SECONDS = 900;

const LINK_AUDIENCE = 'sdf-dashboard-link';
const SESSION_AUDIENCE = 'sdf-dashboard-session';

/** A key of its own, derived from the admin secret: no dashboard token is ever an admin JWT, nor the reverse. */
function dashboardKey(adminSecret: string): KeyObject {
  return hmacKey(createHmac('sha256', adminSecret).update('sdf queue dashboard').digest('base64url'));
}

export function signDashboardLink(adminSecret: string, subject: string): string {
  return jwt.sign({ jti: randomUUID() }, dashboardKey(adminSecret), {
    algorithm: 'HS256',
    audience: LINK_AUDIENCE,
    subject,
    expiresIn: DASHBOARD_LINK_TTL_SECONDS,
  });
}

function verify(token: string, adminSecret: string, audience: string): jwt.JwtPayload | null {
  try {
    const payload = jwt.verify(token, dashboardKey(adminSecret), { algorithms: ['HS256'], audience });
    return typeof payload === 'object' ? payload : null;
  } catch {
    return null;
  }
}

function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

function unauthorized(res: Response, message: string): void {
  res.status(401).json({ error: { code: 'UNAUTHORIZED', message, details: [] } });
}

export interface DashboardOptions {
  adminSecret: string;
  redis: Redis;
  /** Redis key of a used link id (one-time use across every API instance). */
  usedLinkKey: (jti: string) => string;
  queues: Queue[];
  onLogin?: (subject: string, req: Request) => Promise<void>;
}

export function queueDashboard(options: DashboardOptions) {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: options.queues.map((q) => new BullMQAdapter(q)), serverAdapter });
  const app = serverAdapter.getRouter() as Application;
  // bull-board answers from an express app of its own, which would announce itself on every page.
  app.disable('x-powered-by');
  const board = app as unknown as (req: Request, res: Response, next: NextFunction) => void;

  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path === '/login') {
      void login(req, res).catch(next);
      return;
    }
    const session = cookieValue(req, DASHBOARD_COOKIE);
    if (!session || !verify(session, options.adminSecret, SESSION_AUDIENCE)) {
      unauthorized(res, 'The queue dashboard needs a link from `sdf admin dashboard-link`');
      return;
    }
    board(req, res, next);
  };

  async function login(req: Request, res: Response): Promise<void> {
    const ticket = typeof req.query.ticket === 'string' ? req.query.ticket : '';
    const link = verify(ticket, options.adminSecret, LINK_AUDIENCE);
    if (!link?.jti || !link.sub || !link.exp) return unauthorized(res, 'Invalid or expired dashboard link');
    const ttl = Math.max(1, link.exp - Math.floor(Date.now() / 1000));
    // One use: the first request to claim the link id wins; every later one is refused.
    const claimed = await options.redis.set(options.usedLinkKey(link.jti), '1', 'EX', ttl, 'NX');
    if (claimed !== 'OK') return unauthorized(res, 'This dashboard link has been used already');
    await options.onLogin?.(link.sub, req);
    const session = jwt.sign({}, dashboardKey(options.adminSecret), {
      algorithm: 'HS256',
      audience: SESSION_AUDIENCE,
      subject: link.sub,
      expiresIn: DASHBOARD_SESSION_TTL_SECONDS,
    });
    res.cookie(DASHBOARD_COOKIE, session, {
      httpOnly: true,
      secure: req.secure,
      sameSite: 'strict',
      path: DASHBOARD_PATH,
      maxAge: DASHBOARD_SESSION_TTL_SECONDS * 1000,
    });
    res.redirect(303, `${DASHBOARD_PATH}/`);
  }
}
