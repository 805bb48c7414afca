import { Foundation1764000000000 } from './1764000000000-foundation.js';
import { Outbox1764000000001 } from './1764000000001-outbox.js';
import { Documents1764000001000 } from './1764000001000-documents.js';
import { SigningKeys1764000002000 } from './1764000002000-signing-keys.js';
import { Webhooks1764000003000 } from './1764000003000-webhooks.js';
import { SchemaRegistry1764000004000 } from './1764000004000-schema-registry.js';
import { OutboxRetention1764000005000 } from './1764000005000-outbox-retention.js';

/** Every migration, in order. Listed explicitly: glob loading does not work for TypeScript sources under vitest. */
export const migrations = [
  Foundation1764000000000,
  Outbox1764000000001,
  Documents1764000001000,
  SigningKeys1764000002000,
  Webhooks1764000003000,
  SchemaRegistry1764000004000,
  OutboxRetention1764000005000,
];
