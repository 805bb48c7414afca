import type { AuthTenant } from '../tenants/entities/tenant.entity.js';

/** Managed deployment: the user's role in the tenant, from the access token's optional `role` claim. */
export type UserRole = 'owner' | 'admin' | 'member';

/** What the one authentication step resolves; handlers read the tenant from here and nowhere else. */
export type AuthContext =
  | { kind: 'api_key'; tenantId: string; actor: string; keyId: string; keyPrefix: string }
  | {
      kind: 'tenant_jwt';
      tenantId: string;
      actor: string;
      subject: string;
      /** Managed access tokens: the session they belong to (a user session). */
      sessionId?: string;
      /** Managed deployment: the user's role in the tenant; absent on tokens minted for integrations. */
      role?: 'owner' | 'admin' | 'member';
      /** Managed deployment: the user has not verified their email address yet (reads only). */
      unverified?: true;
    }
  | { kind: 'admin'; actor: string; subject: string };

export type TenantAuth = Extract<AuthContext, { tenantId: string }>;

export interface AuthenticatedRequest {
  auth?: AuthContext;
  /** The tenant row the authentication step loaded (rate limiting reads its limit from it). */
  tenant?: AuthTenant;
  ip?: string;
}
