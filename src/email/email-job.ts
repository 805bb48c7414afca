/**
 * An `email` job. The message sits in a nested object so the dead-letter listing (scalars only)
 * never shows a link that carries a token.
 */
export interface EmailJobData {
  tenant_id: string;
  kind: 'email_verification' | 'address_taken' | 'invitation' | 'totp_locked' | 'password_reset';
  to: string;
  /** `html`: the same mail as HTML, sent beside the text as multipart/alternative (absent in jobs queued before it existed). */
  message: { subject: string; text: string; html?: string };
}
