import type { EmailJobData } from '../email/email-job.js';

/** The mails the accounts module sends; plain text, one link each. */
export function verificationMail(tenantId: string, to: string, link: string): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'email_verification',
    to,
    message: {
      subject: 'Confirm your email address',
      text: `Confirm your address for the SDF service by opening this link (valid for 24 hours, once):\n\n${link}\n\nIf you did not sign up, ignore this mail.\n`,
    },
  };
}

/** To the owner of an address someone tried to sign up with: it has an account already. */
export function addressTakenMail(tenantId: string, to: string, signIn: string, forgotPassword: string): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'address_taken',
    to,
    message: {
      subject: 'Someone tried to sign up with your address',
      text:
        'Someone tried to create an SDF account with this address, which already has one. ' +
        'No new account or organization was created.\n\n' +
        `If it was you, sign in instead:\n\n${signIn}\n\n` +
        `If you forgot your password, choose a new one here:\n\n${forgotPassword}\n\n` +
        'If it was not you, ignore this mail: your account is unchanged.\n',
    },
  };
}

export function totpLockedMail(tenantId: string, to: string): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'totp_locked',
    to,
    message: {
      subject: 'Two-factor sign-in locked on your SDF account',
      text:
        'Too many wrong two-factor codes were entered for your SDF account, so two-factor sign-in is locked.\n\n' +
        'To sign in, use one of your recovery codes instead of a code from your app; that lifts the lock.\n\n' +
        'If these attempts were not yours, someone knows your password: change it once you are signed in.\n',
    },
  };
}

export function invitationMail(tenantId: string, to: string, organization: string, link: string): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'invitation',
    to,
    message: {
      subject: `You are invited to ${organization}`,
      text: `You have been invited to join ${organization} on the SDF service. Accept by opening this link (valid for 7 days, once) and choosing a password:\n\n${link}\n`,
    },
  };
}

export function passwordResetMail(tenantId: string, to: string, link: string): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'password_reset',
    to,
    message: {
      subject: 'Choose a new password for your SDF account',
      text:
        `Someone asked to reset the password of your SDF account. To choose a new one, open this link ` +
        `(valid for 30 minutes, once):\n\n${link}\n\nChoosing a new password signs you out everywhere. ` +
        `If you did not ask for this, ignore this mail: your password stays as it is.\n`,
    },
  };
}
