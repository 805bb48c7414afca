import { z } from 'zod';
import type { CryptoBox } from '../common/crypto-box.js';
import { AppError } from '../common/errors.js';
import type { AuthType } from './entities/connector.entity.js';

const text = (max: number) => z.string().min(1, 'must not be empty').max(max);

/** What each auth_type needs (SDF-SPEC Connector configuration; DECISIONS C2). */
const SHAPES = {
  basic: z.strictObject({ username: text(256), password: text(1024) }),
  bearer: z.strictObject({ token: text(8192) }),
  oauth2: z.strictObject({
    token_url: text(2048),
    client_id: text(512),
    client_secret: text(2048),
    scope: z.string().max(1024).optional(),
  }),
} as const;

export type BasicCredentials = z.infer<typeof SHAPES.basic>;
export type BearerCredentials = z.infer<typeof SHAPES.bearer>;
export type OAuth2Credentials = z.infer<typeof SHAPES.oauth2>;
export type Credentials =
  | ({ auth_type: 'basic' } & BasicCredentials)
  | ({ auth_type: 'bearer' } & BearerCredentials)
  | ({ auth_type: 'oauth2' } & OAuth2Credentials);

/** Checks credentials for an auth_type; problems are 400 with a JSON pointer per field (S5). */
export function parseCredentials(authType: AuthType, input: unknown): Credentials {
  const result = SHAPES[authType].safeParse(input);
  if (!result.success) {
    throw AppError.badRequest(
      `Invalid credentials for auth_type ${authType}`,
      result.error.issues.map((i) => ({
        path: '/credentials' + (i.path.length ? '/' + i.path.join('/') : ''),
        message: i.message,
      })),
    );
  }
  return { auth_type: authType, ...result.data } as Credentials;
}

/** S7: sealed to its connector, so a sealed value cannot be moved to another row. */
export function credentialsAssociatedData(connectorId: string): string {
  return `connector:${connectorId}`;
}

export function sealCredentials(box: CryptoBox, connectorId: string, credentials: Credentials): string {
  return box.encrypt(JSON.stringify(credentials), credentialsAssociatedData(connectorId));
}

export function openCredentials(box: CryptoBox, connectorId: string, sealed: string): Credentials {
  return JSON.parse(box.decryptString(sealed, credentialsAssociatedData(connectorId))) as Credentials;
}

/** The names of the fields that are set: what a response may say about credentials (never a value). */
export function credentialFields(credentials: Credentials): string[] {
  return Object.keys(credentials)
    .filter((k) => k !== 'auth_type')
    .sort();
}
