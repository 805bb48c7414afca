import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { RedisService } from '../../src/redis/redis.module.js';
import type { TestApp } from './app.js';

/** A managed user's access token: the tenant JWT with the optional `role` claim (owner, admin, member). */
export function userToken(t: TestApp, tenantId: string, role: 'owner' | 'admin' | 'member', sub = `user-${role}`) {
  return jwt.sign({ tenant_id: tenantId, role }, t.config.secrets.jwtSecret, {
    algorithm: 'HS256',
    subject: sub,
    expiresIn: 600,
  });
}

/** PATCH /admin/tenants/:tenantId as an operator. */
export async function patchTenant(t: TestApp, tenantId: string, body: Record<string, unknown>) {
  return t.http().patch(`/admin/tenants/${tenantId}`).set('Authorization', `Bearer ${t.adminToken()}`).send(body);
}

export async function usageOf(t: TestApp, apiKey: string): Promise<Record<string, unknown>> {
  const res = await t.http().get('/v1/billing/usage').set('X-API-Key', apiKey);
  if (res.status !== 200) throw new Error(`usage answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** The stored files of a tenant, with their sizes (local storage driver). */
export function storedFiles(t: TestApp, tenantId: string): { name: string; size: number }[] {
  const dir = join(t.config.env.STORAGE_LOCAL_DIR, 'tenants', tenantId, 'documents');
  try {
    // The .sdf files: the data.json copy validation keeps beside a valid file is not the tenant's upload.
    return readdirSync(dir)
      .filter((name) => name.endsWith('.sdf'))
      .map((name) => ({ name, size: statSync(join(dir, name)).size }));
  } catch {
    return [];
  }
}

export async function countRows(t: TestApp, sql: string, params: unknown[]): Promise<number> {
  const rows = (await t.ds.query(sql, params)) as { n: string }[];
  return Number(rows[0].n);
}

/** Drops the tenant's billing state from Redis, as a Redis restart would. */
export async function forgetRedisState(t: TestApp, tenantId: string): Promise<void> {
  const redis = t.app.get(RedisService);
  await redis.client.del(redis.key('bill', tenantId), redis.key('use', tenantId));
}

export async function redisKeys(t: TestApp, pattern: string): Promise<string[]> {
  const redis = t.app.get(RedisService);
  return redis.client.keys(redis.key(pattern));
}
