/**
 * Every action the service writes to the audit log, with the words a person reads for it. `document`: the
 * entry's `resource_id` is the service's id of a document (its title is looked up); `operator`: written
 * without a tenant (an operator's own act), so never in an organization's log and not offered as a filter
 * there. src/audit/audit-actions.spec.ts checks that every action the code records is listed here.
 */
export interface AuditActionInfo {
  action: string;
  label: string;
  document?: true;
  operator?: true;
}

export const AUDIT_ACTIONS: readonly AuditActionInfo[] = [
  { action: 'upload', label: 'Document uploaded', document: true },
  { action: 'download', label: 'Document downloaded', document: true },
  { action: 'sign', label: 'Document signed', document: true },
  { action: 'sign.failed', label: 'Signing failed', document: true },
  { action: 'verify', label: 'Signature verified', document: true },
  { action: 'delete', label: 'Document deleted', document: true },
  { action: 'connector.match', label: 'Document matched in the ERP', document: true },
  { action: 'connector.push', label: 'Document sent to the ERP', document: true },
  { action: 'connector.push_succeeded', label: 'ERP accepted the document', document: true },
  { action: 'connector.push_failed', label: 'ERP did not take the document', document: true },
  { action: 'connector.configure', label: 'Connector configured' },
  { action: 'connector.delete', label: 'Connector removed' },
  { action: 'api_key.create', label: 'API key created' },
  { action: 'api_key.revoke', label: 'API key revoked' },
  { action: 'webhook.create', label: 'Webhook added' },
  { action: 'webhook.delete', label: 'Webhook removed' },
  { action: 'webhook.delivery_failed', label: 'Webhook delivery failed' },
  { action: 'schema.create', label: 'Schema registered' },
  { action: 'signing_key.rotate', label: 'Signing key rotated' },
  { action: 'login', label: 'Signed in' },
  { action: 'login.failed', label: 'Sign-in failed' },
  { action: 'login.totp_required', label: 'Sign-in awaiting a code' },
  { action: 'login.totp_failed', label: 'Wrong sign-in code' },
  { action: 'logout', label: 'Signed out' },
  { action: 'saml.login', label: 'Signed in with single sign-on' },
  { action: 'saml.login_refused', label: 'Single sign-on refused' },
  { action: 'session.refresh', label: 'Session renewed' },
  { action: 'session.refresh_repeat', label: 'Session renewal repeated' },
  { action: 'session.refresh_reuse', label: 'Reused session token refused' },
  { action: 'session.revoke', label: 'Session ended' },
  { action: 'session.revoke_all', label: 'All sessions ended' },
  { action: 'totp.setup', label: 'Two-step sign-in set up' },
  { action: 'totp.enable', label: 'Two-step sign-in turned on' },
  { action: 'totp.disable', label: 'Two-step sign-in turned off' },
  { action: 'totp.locked', label: 'Two-step sign-in locked' },
  { action: 'totp.unlocked', label: 'Two-step sign-in unlocked' },
  { action: 'account.register', label: 'Organization registered' },
  { action: 'account.register_existing', label: 'Sign-up with a known address' },
  { action: 'account.email_verified', label: 'Email address verified' },
  { action: 'account.verification_resent', label: 'Verification mail sent again' },
  { action: 'account.password_reset_requested', label: 'Password reset requested' },
  { action: 'account.password_reset', label: 'Password reset' },
  { action: 'profile.update', label: 'Profile updated' },
  { action: 'profile.password_change', label: 'Password changed' },
  { action: 'organization.update', label: 'Organization renamed' },
  { action: 'team.invite', label: 'Member invited' },
  { action: 'team.invitation_resend', label: 'Invitation sent again' },
  { action: 'team.invitation_cancel', label: 'Invitation cancelled' },
  { action: 'team.join', label: 'Member joined' },
  { action: 'team.role_change', label: 'Member role changed' },
  { action: 'team.remove', label: 'Member removed' },
  { action: 'team.ownership_transfer', label: 'Ownership transferred' },
  { action: 'billing.plan_change', label: 'Plan changed' },
  { action: 'quota.exceeded', label: 'Plan quota reached' },
  { action: 'rate_limit.exceeded', label: 'Rate limit reached' },
  { action: 'tenant.create', label: 'Organization created' },
  { action: 'tenant.update', label: 'Organization settings changed' },
  { action: 'tenant.connector_private_targets', label: 'Connector private addresses changed' },
  { action: 'queue.job_retry', label: 'Failed job retried' },
  { action: 'admin.dashboard_login', label: 'Operator opened the queue dashboard', operator: true },
  { action: 'audit.partition_dropped', label: 'Audit entries past retention removed', operator: true },
];

const BY_ACTION = new Map(AUDIT_ACTIONS.map((a) => [a.action, a]));

/** The words for an action; an action this version does not know (older or newer entries) reads as itself. */
export function actionLabel(action: string): string {
  return BY_ACTION.get(action)?.label ?? action;
}

/** Whether an action's `resource_id` is a document's id. */
export function concernsDocument(action: string): boolean {
  return BY_ACTION.get(action)?.document === true;
}

/** The actions an organization's log can hold, in the order above (the audit page offers them). */
export const TENANT_AUDIT_ACTIONS = AUDIT_ACTIONS.filter((a) => !a.operator);
