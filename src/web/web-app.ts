import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';

/** Where the web front end is served. */
export const WEB_BASE = '/app';

/**
 * The built front end (`vite build` writes dist/web): next to the compiled server in dist/, or, when
 * the server runs from its TypeScript sources (the tests), in the project's dist/.
 */
export function webDistDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const compiled = resolve(here, '../../web');
  return here.split(/[\\/]/).includes('dist') ? compiled : resolve(here, '../../dist/web');
}

/**
 * The pages' policy: scripts, styles, fonts and workers from this origin only (no inline script or
 * style, no eval), images also as data: and blob: URLs (pdf.js draws some through them), and requests
 * to this origin plus the JWKS origins the reader was pointed at (`?jwks=` on the page's own URL; each is
 * checked by jwksOrigins, so the policy allows exactly that https origin, never a wildcard, and the reader
 * fetches from it only after the person confirms).
 */
export function pageDirectives(extraConnect: string[] = []): Record<string, string[]> {
  return {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:', 'blob:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'", ...extraConnect],
    workerSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  };
}

/**
 * The reader's validation worker runs the format core, whose JSON Schema validator (ajv) compiles
 * each file's schema.json into a function, as it does on the server. That needs eval, so the worker
 * script (and nothing else) is served with a policy that allows it; it has no DOM and no network
 * (the page fetches any JWKS and hands the keys over).
 */
function workerDirectives(): Record<string, string[]> {
  return { ...pageDirectives(), scriptSrc: ["'self'", "'unsafe-eval'"], connectSrc: ["'none'"] };
}

/** At most this many key lists on one page address. */
const MAX_JWKS = 4;
/** A DNS name the policy can hold as it is: letters, digits, hyphens and dots (Unicode names arrive as punycode). */
const HOST_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/;

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * One `jwks` value: a path on this origin (no policy change), or a plain https origin's URL (http only
 * on loopback). Anything else, a wildcard or a character a Content-Security-Policy source cannot hold
 * included, is refused with the reason; the origin that goes into `connect-src` is the URL parser's own.
 */
function jwksOrigin(value: unknown): { origin: string | null } | { refused: string } {
  if (typeof value !== 'string') return { refused: 'jwks must be one web address per parameter' };
  if (value === '' || (value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\'))) {
    return { origin: null };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { refused: 'jwks is not a web address' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    return { refused: 'a key list address must use https (http only for localhost)' };
  }
  if (url.username || url.password) return { refused: 'a key list address carries no user name or password' };
  if (!HOST_NAME.test(url.hostname) && !IPV6_LITERAL.test(url.hostname)) {
    return { refused: 'the key list address has a host name with characters a web address host cannot have' };
  }
  return { origin: url.origin };
}

/** The key list origins named by `jwks`, or why the address is refused. */
export function jwksOrigins(query: Request['query']): { origins: string[] } | { refused: string } {
  const raw = query.jwks;
  const values: unknown[] = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  if (values.length > MAX_JWKS) return { refused: `at most ${MAX_JWKS} key list addresses` };
  const origins = new Set<string>();
  for (const value of values) {
    const checked = jwksOrigin(value);
    if ('refused' in checked) return checked;
    if (checked.origin) origins.add(checked.origin);
  }
  return { origins: [...origins] };
}

function policy(
  directives: Record<string, string[]>,
  req: Request,
): (req: Request, res: Response, next: NextFunction) => void {
  return helmet.contentSecurityPolicy({
    directives: { ...directives, upgradeInsecureRequests: req.secure ? [] : null },
  });
}

/** The validation worker, by its path below /app/assets. */
const VALIDATION_WORKER = /^\/reader-worker-[A-Za-z0-9_-]+\.js$/;

/**
 * The web front end at /app/: hashed assets cached for a year, every other path under /app/ answered
 * with index.html (not cached) so the client-side router can take it; `/` redirects to /app/. Nothing
 * outside /app/ is touched: API paths, unknown ones included, answer as before.
 */
export function webApp(distDir = webDistDir()): Router {
  const router = express.Router({ strict: true, caseSensitive: true });
  router.get('/', (_req, res) => res.redirect(302, `${WEB_BASE}/`));
  router.get(WEB_BASE, (_req, res) => res.redirect(301, `${WEB_BASE}/`));

  const indexFile = join(distDir, 'index.html');
  const assets = express.static(join(distDir, 'assets'), {
    immutable: true,
    maxAge: '365d',
    index: false,
    fallthrough: true,
  });
  router.use(`${WEB_BASE}/assets`, (req, res) => {
    const directives = VALIDATION_WORKER.test(req.path) ? workerDirectives() : pageDirectives();
    policy(directives, req)(req, res, () =>
      assets(req, res, () => {
        res.status(404).json({ error: { code: 'NOT_FOUND', message: 'No such file', details: [] } });
      }),
    );
  });

  let index: Buffer | undefined;
  router.get(/^\/app\/.*/, (req, res, next) => {
    if (!existsSync(indexFile)) {
      res.status(503).json({
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'The web front end is not built; run npm run build',
          details: [],
        },
      });
      return;
    }
    const jwks = jwksOrigins(req.query);
    if ('refused' in jwks) {
      res.status(400).json({
        error: {
          code: 'VALIDATION_ERROR',
          message: `The key list address is refused: ${jwks.refused}`,
          details: [{ path: '/jwks', message: jwks.refused }],
        },
      });
      return;
    }
    index ??= readFileSync(indexFile);
    policy(pageDirectives(jwks.origins), req)(req, res, (error?: unknown) => {
      if (error) return next(error);
      res.setHeader('Cache-Control', 'no-cache');
      res.type('html').send(index);
    });
  });
  return router;
}
