import { accountsEntities } from './accounts/accounts.module.js';
import { auditEntities } from './audit/audit.module.js';
import { authEntities } from './auth/auth.module.js';
import { connectorsEntities } from './connectors/connectors.module.js';
import { documentsEntities } from './documents/documents.module.js';
import { eventsEntities } from './events/events.module.js';
import { schemasEntities } from './schemas/schemas.module.js';
import { signingKeysEntities } from './signing/signing-keys.module.js';
import { tenantsEntities } from './tenants/tenants.module.js';
import { webhooksEntities } from './webhooks/webhooks.module.js';

/**
 * Every entity of every module, for the migration data source: the service itself loads only those its
 * modules register (`TypeOrmModule.forFeature`). A test checks this list against the managed deployment's.
 */
export const allEntities = [
  ...tenantsEntities,
  ...authEntities,
  ...auditEntities,
  ...eventsEntities,
  ...documentsEntities,
  ...webhooksEntities,
  ...signingKeysEntities,
  ...schemasEntities,
  ...accountsEntities,
  ...connectorsEntities,
];
