/**
 * An `email` job. The message sits in a nested object so the dead-letter listing (scalars only)
 * never shows a link that carries a token.
 */
export interface EmailJobData {
  tenant_id: string;
  kind: 'email_verification' | 'address_taken' | 'invitation' | 'totp_locked' | 'password_reset';
  to: string;
  message: { subject: string; text: string };
}
