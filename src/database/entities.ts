import { AccountToken } from '../accounts/entities/account-token.entity.js';
import { RecoveryCode } from '../accounts/entities/recovery-code.entity.js';
import { Session } from '../accounts/entities/session.entity.js';
import { User } from '../accounts/entities/user.entity.js';
import { AuditLogEntry } from '../audit/entities/audit-log.entity.js';
import { Connector } from '../connectors/entities/connector.entity.js';
import { ErpPush } from '../connectors/entities/erp-push.entity.js';
import { ApiKey } from '../auth/entities/api-key.entity.js';
import { SdfDocument } from '../documents/entities/document.entity.js';
import { OutboxEvent } from '../events/entities/outbox-event.entity.js';
import { RegisteredSchema } from '../schemas/entities/registered-schema.entity.js';
import { SigningKey } from '../signing/entities/signing-key.entity.js';
import { Tenant } from '../tenants/entities/tenant.entity.js';
import { Webhook } from '../webhooks/entities/webhook.entity.js';

/** Every entity, listed explicitly (ES modules and vitest rule out glob loading). */
export const entities = [
  Tenant,
  ApiKey,
  AuditLogEntry,
  OutboxEvent,
  SdfDocument,
  Webhook,
  SigningKey,
  RegisteredSchema,
  User,
  Session,
  AccountToken,
  RecoveryCode,
  Connector,
  ErpPush,
];
