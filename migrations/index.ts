import { Foundation1764000000000 } from './1764000000000-foundation.js';
import { Outbox1764000000001 } from './1764000000001-outbox.js';
import { Documents1764000001000 } from './1764000001000-documents.js';
import { SigningKeys1764000002000 } from './1764000002000-signing-keys.js';
import { Webhooks1764000003000 } from './1764000003000-webhooks.js';
import { SchemaRegistry1764000004000 } from './1764000004000-schema-registry.js';
import { OutboxRetention1764000005000 } from './1764000005000-outbox-retention.js';
import { WebhookSecretKeyedHash1764000008000 } from './1764000008000-webhook-secret-keyed-hash.js';
import { Accounts1764000010000 } from './1764000010000-accounts.js';
import { AuditQueryIndexes1764000013000 } from './1764000013000-audit-query-indexes.js';
import { Saml1764000050000 } from './1764000050000-saml.js';
import { Connectors1764000020000 } from './1764000020000-connectors.js';
import { Billing1764000040000 } from './1764000040000-billing.js';
import { SigningError1764000030000 } from './1764000030000-signing-error.js';
import { OutboxTraceContext1764000031000 } from './1764000031000-outbox-trace-context.js';
import { TenantPlanSync1764000060000 } from './1764000060000-tenant-plan-sync.js';
import { AuditPartitions1764000070000 } from './1764000070000-audit-partitions.js';
import { OutboxNotifyUndispatched1764000080000 } from './1764000080000-outbox-notify-undispatched.js';
import { LighterDocumentWrites1764000090000 } from './1764000090000-lighter-document-writes.js';
import { MasterKeyChecks1795591524793 } from './1795591524793-master-key-checks.js';
import { ValidationError1795592151181 } from './1795592151181-validation-error.js';
import { TotpLock1795592522872 } from './1795592522872-totp-lock.js';
import { ConnectorPrivateTargets1795593221144 } from './1795593221144-connector-private-targets.js';
import { PasswordResetTokens1795600000000 } from './1795600000000-password-reset-tokens.js';
import { UserNames1795700000000 } from './1795700000000-user-names.js';
import { RowLevelSecurity1795800000000 } from './1795800000000-row-level-security.js';
import { StorageChanges1795900000000 } from './1795900000000-storage-changes.js';
import { ApiKeyLookup1796000000000 } from './1796000000000-api-key-lookup.js';
import { DocumentSummaries1796100000000 } from './1796100000000-document-summaries.js';
import { SessionFirstUse1796150000000 } from './1796150000000-session-first-use.js';
import { SchemaSummaryMappings1796170000000 } from './1796170000000-schema-summary-mappings.js';
import { EventStream1796200000000 } from './1796200000000-event-stream.js';
import { DocumentSearchRole1796210000000 } from './1796210000000-document-search-role.js';
import { ExtensionEvents1796300000000 } from './1796300000000-extension-events.js';
import { EventSequencerFunction1796400000000 } from './1796400000000-event-sequencer-function.js';
import { EventStreamPresence1796500000000 } from './1796500000000-event-stream-presence.js';
import { PartialSummaryIndexes1796600000000 } from './1796600000000-partial-summary-indexes.js';

/** Every migration, in order. Listed explicitly: glob loading does not work for TypeScript sources under vitest. */
export const migrations = [
  Foundation1764000000000,
  Outbox1764000000001,
  Documents1764000001000,
  SigningKeys1764000002000,
  Webhooks1764000003000,
  SchemaRegistry1764000004000,
  OutboxRetention1764000005000,
  WebhookSecretKeyedHash1764000008000,
  Accounts1764000010000,
  AuditQueryIndexes1764000013000,
  Connectors1764000020000,
  SigningError1764000030000,
  OutboxTraceContext1764000031000,
  Billing1764000040000,
  Saml1764000050000,
  TenantPlanSync1764000060000,
  AuditPartitions1764000070000,
  OutboxNotifyUndispatched1764000080000,
  LighterDocumentWrites1764000090000,
  MasterKeyChecks1795591524793,
  ValidationError1795592151181,
  TotpLock1795592522872,
  ConnectorPrivateTargets1795593221144,
  PasswordResetTokens1795600000000,
  UserNames1795700000000,
  RowLevelSecurity1795800000000,
  StorageChanges1795900000000,
  ApiKeyLookup1796000000000,
  DocumentSummaries1796100000000,
  SessionFirstUse1796150000000,
  SchemaSummaryMappings1796170000000,
  EventStream1796200000000,
  DocumentSearchRole1796210000000,
  ExtensionEvents1796300000000,
  EventSequencerFunction1796400000000,
  EventStreamPresence1796500000000,
  PartialSummaryIndexes1796600000000,
];
