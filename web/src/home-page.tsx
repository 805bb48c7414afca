import { Link } from 'wouter';
import { useDeploymentMode } from './documents/sign-in-page.js';
import { useSession } from './session.js';

export function HomePage() {
  const { signedIn } = useSession();
  const managed = useDeploymentMode() === 'managed';
  return (
    <section className="home">
      <h1 tabIndex={-1}>SDF documents</h1>
      <p className="lead">
        An SDF file is one file with two faces: a PDF that people read and JSON data that software reads, optionally
        signed. This service checks, stores, signs and shares them.
      </p>
      <div className="cards">
        <article className="card">
          <h2>Read a file</h2>
          <p>
            Open an <code>.sdf</code> file you received: see the document, its data, and whether it is valid and who
            signed it. The file never leaves your browser.
          </p>
          <Link href="/read" className="button">
            Open the reader
          </Link>
        </article>
        <article className="card">
          <h2>Your documents</h2>
          <p>Upload, check, sign and download your organisation&apos;s SDF files.</p>
          <Link href={signedIn ? '/documents' : '/sign-in'} className="button secondary">
            {signedIn ? 'Go to documents' : 'Sign in'}
          </Link>
        </article>
        {managed && !signedIn && (
          <article className="card">
            <h2>New here?</h2>
            <p>
              Create an organisation in a minute and start on the Free plan; your team, API keys and signing keys come
              with it.
            </p>
            <Link href="/sign-up" className="button">
              Create an organisation
            </Link>
          </article>
        )}
      </div>
    </section>
  );
}
