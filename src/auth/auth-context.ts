import type { Tenant } from '../tenants/entities/tenant.entity.js';

/** What the one authentication step resolves; handlers read the tenant from here and nowhere else. */
export type AuthContext =
  | { kind: 'api_key'; tenantId: string; actor: string; keyId: string; keyPrefix: string }
  | { kind: 'tenant_jwt'; tenantId: string; actor: string; subject: string }
  | { kind: 'admin'; actor: string; subject: string };

export type TenantAuth = Extract<AuthContext, { tenantId: string }>;

export interface AuthenticatedRequest {
  auth?: AuthContext;
  /** The tenant row the authentication step loaded (rate limiting reads its limit from it). */
  tenant?: Tenant;
  ip?: string;
}
