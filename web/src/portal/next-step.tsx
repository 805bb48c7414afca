import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { useSession } from '../session.js';

/** A confirmation page's next step: one button-styled link, the first thing after the message. */
export function NextStep({ href, children }: { href: string; children: ReactNode }) {
  return (
    <p className="actions" data-testid="next-step">
      <Link href={href} className="button">
        {children}
      </Link>
    </p>
  );
}

/** After a confirmation: to the documents when signed in, else to the sign-in page. */
export function SignInOrDocuments() {
  const { signedIn } = useSession();
  return signedIn ? (
    <NextStep href="/documents">Go to your documents</NextStep>
  ) : (
    <NextStep href="/sign-in">Sign in</NextStep>
  );
}
