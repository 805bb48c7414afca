import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, Route, Switch, useLocation } from 'wouter';
import { DocumentPage } from './documents/document-page.js';
import { DocumentsPage } from './documents/documents-page.js';
import { RequireSignIn, SignInAgain, SignInPage } from './documents/sign-in-page.js';
import { ServiceWaitBanner } from './documents/status.js';
import { SchemasPage } from './documents/schemas-page.js';
import { WebhooksPage } from './documents/webhooks-page.js';
import { HomePage } from './home-page.js';
import { AcceptInvitationPage } from './portal/accept-invitation-page.js';
import { ApiKeysPage } from './portal/api-keys-page.js';
import { AuditPage } from './portal/audit-page.js';
import { ConnectorsPage } from './portal/connectors-page.js';
import { PlanPage } from './portal/plan-page.js';
import { ProfilePage } from './portal/profile-page.js';
import { SettingsPage } from './portal/settings-page.js';
import { SecurityPage } from './portal/security-page.js';
import { SignUpPage } from './portal/sign-up-page.js';
import { SsoLandingPage } from './portal/sso-landing-page.js';
import { UsagePage } from './portal/usage-page.js';
import { TeamPage, useProfile } from './portal/team-page.js';
import { ForgotPasswordPage } from './portal/forgot-password-page.js';
import { ResetPasswordPage } from './portal/reset-password-page.js';
import { VerifyEmailPage } from './portal/verify-email-page.js';
import { ReaderPage } from './reader/reader-page.js';
import { useSession } from './session.js';
import { SSO_LANDING } from './sso.js';

/** A section of the menu; `also` names other addresses of the same page (the plan page is also `/billing`). */
function NavLink({ href, also = [], children }: { href: string; also?: string[]; children: ReactNode }) {
  const [location] = useLocation();
  const current = [href, ...also].some(
    (path) => location === path || (path !== '/' && location.startsWith(`${path}/`)),
  );
  return (
    <Link href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/** Moves focus to the page's heading after a navigation, so keyboard and screen-reader users follow it. */
function useFocusOnNavigate() {
  const [location] = useLocation();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [location]);
}

/**
 * The phone-sized header's menu: one button that opens the sections; it closes on a navigation and on
 * Escape (focus back on the button). On a wide screen the sections are always shown and the button is not.
 */
function useMenu() {
  const [open, setOpen] = useState(false);
  const [location] = useLocation();
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [location]);
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  return { open, toggle: () => setOpen((now) => !now), button };
}

/** The shell every page shares: a skip link, the header with navigation, the page, a footer. */
export function App() {
  const { signedIn, signOut, credential } = useSession();
  const account = credential?.kind === 'account';
  // The pages a member may not use are not offered (the API refuses them too).
  const role = useProfile(account).data?.role;
  const manages = role === 'owner' || role === 'admin';
  useFocusOnNavigate();
  const menu = useMenu();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <Link href="/" className="brand">
          <span aria-hidden="true" className="brand-mark">
            SDF
          </span>
          <span className="brand-name">Document service</span>
        </Link>
        <button
          ref={menu.button}
          type="button"
          className="menu-button secondary"
          aria-expanded={menu.open}
          aria-controls="site-menu"
          onClick={menu.toggle}
        >
          <span aria-hidden="true" className="menu-icon">
            ☰
          </span>{' '}
          Menu
        </button>
        <div id="site-menu" className={`site-menu${menu.open ? ' open' : ''}`}>
          <nav aria-label="Main">
            <ul>
              <li>
                <NavLink href="/read">Read a file</NavLink>
              </li>
              <li>
                <NavLink href="/documents">Documents</NavLink>
              </li>
              {signedIn && (
                <>
                  <li>
                    <NavLink href="/schemas">Schemas</NavLink>
                  </li>
                  <li>
                    <NavLink href="/webhooks">Webhooks</NavLink>
                  </li>
                  {(!account || manages) && (
                    <li>
                      <NavLink href="/connectors">Connectors</NavLink>
                    </li>
                  )}
                </>
              )}
            </ul>
            {signedIn && account && (
              <ul className="account-nav">
                {manages && (
                  <>
                    <li>
                      <NavLink href="/team">Team</NavLink>
                    </li>
                    <li>
                      <NavLink href="/api-keys">API keys</NavLink>
                    </li>
                    <li>
                      <NavLink href="/usage">Usage</NavLink>
                    </li>
                    <li>
                      <NavLink href="/plan" also={['/billing']}>
                        Plan
                      </NavLink>
                    </li>
                    <li>
                      <NavLink href="/audit">Audit log</NavLink>
                    </li>
                    <li>
                      <NavLink href="/settings">Settings</NavLink>
                    </li>
                  </>
                )}
                <li>
                  <NavLink href="/profile">Profile</NavLink>
                </li>
                <li>
                  <NavLink href="/security">Security</NavLink>
                </li>
              </ul>
            )}
          </nav>
          <div className="session">
            {signedIn ? (
              <button type="button" className="link-button" onClick={() => void signOut()}>
                Sign out
              </button>
            ) : (
              <Link href="/sign-in">Sign in</Link>
            )}
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <SignInAgain />
        <ServiceWaitBanner />
        <Switch>
          <Route path="/" component={HomePage} />
          <Route path="/read" component={ReaderPage} />
          <Route path="/sign-in" component={SignInPage} />
          <Route path={SSO_LANDING} component={SsoLandingPage} />
          <Route path="/verify-email" component={VerifyEmailPage} />
          <Route path="/accept-invitation" component={AcceptInvitationPage} />
          <Route path="/forgot-password" component={ForgotPasswordPage} />
          <Route path="/sign-up" component={SignUpPage} />
          <Route path="/reset-password" component={ResetPasswordPage} />
          <Route path="/documents">
            <RequireSignIn>
              <DocumentsPage />
            </RequireSignIn>
          </Route>
          <Route path="/documents/:id">
            {(params) => (
              <RequireSignIn>
                <DocumentPage id={params.id} />
              </RequireSignIn>
            )}
          </Route>
          <Route path="/schemas">
            <RequireSignIn>
              <SchemasPage />
            </RequireSignIn>
          </Route>
          <Route path="/api-keys">
            <RequireSignIn>
              <ApiKeysPage />
            </RequireSignIn>
          </Route>
          <Route path="/usage">
            <RequireSignIn>
              <UsagePage />
            </RequireSignIn>
          </Route>
          <Route path="/audit">
            <RequireSignIn>
              <AuditPage />
            </RequireSignIn>
          </Route>
          <Route path="/security">
            <RequireSignIn>
              <SecurityPage />
            </RequireSignIn>
          </Route>
          <Route path="/team">
            <RequireSignIn>
              <TeamPage />
            </RequireSignIn>
          </Route>
          <Route path="/plan">
            <RequireSignIn>
              <PlanPage />
            </RequireSignIn>
          </Route>
          {/* Where Stripe sends the customer back (STRIPE_RETURN_URL): the same page. */}
          <Route path="/billing">
            <RequireSignIn>
              <PlanPage />
            </RequireSignIn>
          </Route>
          <Route path="/profile">
            <RequireSignIn>
              <ProfilePage />
            </RequireSignIn>
          </Route>
          <Route path="/settings">
            <RequireSignIn>
              <SettingsPage />
            </RequireSignIn>
          </Route>
          <Route path="/connectors">
            <RequireSignIn>
              <ConnectorsPage />
            </RequireSignIn>
          </Route>
          <Route path="/webhooks">
            <RequireSignIn>
              <WebhooksPage />
            </RequireSignIn>
          </Route>
          <Route>
            <NotFoundPage />
          </Route>
        </Switch>
      </main>
      <footer className="site-footer">
        <p>
          SDF files carry a PDF for people and JSON data for machines. <a href="/docs">API reference</a>
        </p>
      </footer>
    </>
  );
}

function NotFoundPage() {
  return (
    <section>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no page at this address. <Link href="/">Go to the start page</Link>.
      </p>
    </section>
  );
}
