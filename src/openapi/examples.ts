/**
 * Example values of the OpenAPI document, shared so that the examples of related schemas tell one
 * consistent story (the tenant of a webhook is the tenant shown by GET /tenant, and so on).
 */
export const EX = {
  tenantId: '7d1e5c2a-3b4f-4c6d-8e9f-0a1b2c3d4e5f',
  /** A document record id: the :id of every document path. */
  documentId: '0b5c4c9e-4a8d-4a2e-9a39-1d8e9c6f0d11',
  /** meta.json's document_id, chosen by the producer of the file. */
  metaDocumentId: 'c3f1a2b4-5d6e-4f70-8a91-b2c3d4e5f607',
  apiKeyId: '4a9e2f61-8c3d-4b7a-9e15-62d0f3a8b7c4',
  webhookId: '9b2d7e14-6a5c-4f38-8d21-c7e0b4a9f356',
  connectorId: '2e8f4a17-9c6b-4d53-a0e2-8b1c7d5f3e96',
  pushId: '6c3a9d85-1f4e-4b72-9a6d-e5b8c2f70a14',
  userId: '3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  invitationId: 'a1d5c8e3-7b2f-4e96-8c40-f9b6a3d2e1c7',
  sessionId: '5f1c9a3e-8b2d-4c7a-9e60-d3b8f2a4c1e9',
  /** An outbox event id (the id of a webhook delivery's payload). */
  eventId: 'd4b7e2a9-5c1f-4a86-9e3b-7f0c2d8a6b15',
  auditEntryId: 'e7c4b1a9-2d8f-4c63-b5e0-1a9d6f3c8b72',
  /** A tenant JWT (shortened). */
  accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0ZW5hbnRfaWQiOiI3ZDFlNWMyYSJ9.c2lnbmF0dXJl',
  /** 32 random bytes, base64url: refresh tokens, mail tokens, TOTP session tokens. */
  opaqueToken: 'Zq8mT3vX1bN6cR0pL4sW9yK2hF7dJ5gA3uE8iO1tQwM',
  /** The key_id (JWK thumbprint) of the example P-256 signing key. */
  keyThumbprint: 'lSzEL7ECHW_234BkHHZOmFVik-ckH59cziYwAHBvFgw',
  createdAt: '2026-03-15T13:30:00.000Z',
  updatedAt: '2026-03-15T13:30:02.417Z',
  expiresAt: '2027-03-15T00:00:00.000Z',
} as const;

/** The example of a uuid path parameter. */
export const EXAMPLE_UUID = EX.documentId;
