import type { EmailJobData } from '../email/email-job.js';
import { htmlMail } from '../email/html-mail.js';

/**
 * The mails the accounts module sends: a plain-text part, and an HTML part with the same links (a
 * button and the address written out), the organisation's name and why the mail came.
 */
export function verificationMail(
  tenantId: string,
  to: string,
  organization: string | null,
  link: string,
): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'email_verification',
    to,
    message: {
      subject: 'Confirm your email address',
      text: `Confirm your address for the SDF service by opening this link (valid for 24 hours, once):\n\n${link}\n\nIf you did not sign up, ignore this mail.\n`,
      html: htmlMail({
        title: 'Confirm your email address',
        organization,
        paragraphs: [
          organization
            ? `Confirm this address to finish creating the account of ${organization} on the SDF document service.`
            : 'Confirm this address to finish creating your account on the SDF document service.',
        ],
        button: { label: 'Confirm my address', link },
        expiry: 'The link works once, within 24 hours.',
        why: 'You received this mail because this address was used to sign up. If you did not sign up, ignore it: nothing happens without the link.',
      }),
    },
  };
}

/** To the owner of an address someone tried to sign up with: it has an account already. */
export function addressTakenMail(
  tenantId: string,
  to: string,
  organization: string | null,
  signIn: string,
  forgotPassword: string,
): EmailJobData {
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
      html: htmlMail({
        title: 'Someone tried to sign up with your address',
        organization,
        paragraphs: [
          'Someone tried to create an SDF account with this address, which already has one' +
            (organization ? ` in ${organization}` : '') +
            '. No new account or organisation was created.',
          'If it was you, sign in instead.',
        ],
        button: { label: 'Sign in', link: signIn },
        more: [{ text: 'Forgot your password? Choose a new one here:', link: forgotPassword }],
        why: 'You received this mail because a sign-up used this address. If it was not you, ignore it: your account is unchanged.',
      }),
    },
  };
}

export function totpLockedMail(
  tenantId: string,
  to: string,
  organization: string | null,
  signIn: string,
): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'totp_locked',
    to,
    message: {
      subject: 'Two-factor sign-in locked on your SDF account',
      text:
        'Too many wrong two-factor codes were entered for your SDF account, so two-factor sign-in is locked.\n\n' +
        `To sign in, use one of your recovery codes instead of a code from your app; that lifts the lock:\n\n${signIn}\n\n` +
        'If these attempts were not yours, someone knows your password: change it once you are signed in.\n',
      html: htmlMail({
        title: 'Two-factor sign-in is locked',
        organization,
        paragraphs: [
          'Too many wrong two-factor codes were entered for your SDF account' +
            (organization ? ` in ${organization}` : '') +
            ', so two-factor sign-in is locked.',
          'To sign in, use one of your recovery codes instead of a code from your app; that lifts the lock.',
          'If these attempts were not yours, someone knows your password: change it once you are signed in.',
        ],
        button: { label: 'Sign in with a recovery code', link: signIn },
        why: 'You received this mail because your account’s two-factor sign-in was locked. The lock stays until a recovery code is used.',
      }),
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
      html: htmlMail({
        title: `You are invited to ${organization}`,
        organization,
        paragraphs: [
          `You have been invited to join ${organization} on the SDF document service. Accept and choose a password to sign in.`,
        ],
        button: { label: 'Accept the invitation', link },
        expiry: 'The link works once, within 7 days.',
        why: `You received this mail because someone in ${organization} invited this address. If you do not expect it, ignore it: nothing happens without the link.`,
      }),
    },
  };
}

/**
 * An invitation to an address that has an account in another organization: an account belongs to one
 * organization, so it cannot join this one. The inviter is not told (it would say who has an account).
 */
export function invitationToAccountHolderMail(
  tenantId: string,
  to: string,
  organization: string,
  signIn: string,
): EmailJobData {
  return {
    tenant_id: tenantId,
    kind: 'invitation',
    to,
    message: {
      subject: `You are invited to ${organization}`,
      text:
        `Someone in ${organization} invited this address to join them on the SDF service. ` +
        'This address already has an SDF account in another organization, and an account belongs to one ' +
        `organization, so it cannot join ${organization}.\n\n` +
        `To work with ${organization}, ask them to invite another of your addresses. ` +
        `Your account is unchanged; to sign in to it:\n\n${signIn}\n`,
      html: htmlMail({
        title: `You are invited to ${organization}`,
        organization,
        paragraphs: [
          `Someone in ${organization} invited this address to join them on the SDF document service.`,
          'This address already has an SDF account in another organization, and an account belongs to one ' +
            `organization, so it cannot join ${organization}. To work with them, ask them to invite another of your addresses.`,
          'Your account is unchanged.',
        ],
        button: { label: 'Sign in to your account', link: signIn },
        why: `You received this mail because someone in ${organization} invited this address. If you do not expect it, ignore it.`,
      }),
    },
  };
}

export function passwordResetMail(
  tenantId: string,
  to: string,
  organization: string | null,
  link: string,
): EmailJobData {
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
      html: htmlMail({
        title: 'Choose a new password',
        organization,
        paragraphs: [
          'Someone asked to reset the password of your SDF account' +
            (organization ? ` in ${organization}` : '') +
            '. Choosing a new password signs you out everywhere.',
        ],
        button: { label: 'Choose a new password', link },
        expiry: 'The link works once, within 30 minutes.',
        why: 'You received this mail because a new password was asked for with this address. If it was not you, ignore it: your password stays as it is.',
      }),
    },
  };
}
