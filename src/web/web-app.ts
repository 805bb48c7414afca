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
 * to this origin plus the JWKS origins the reader was pointed at (`?jwks=` on the page's own URL: the
 * user's explicit choice, so the policy allows exactly that origin and nothing else).
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

/** The origins of the `jwks` query parameters that are absolute http(s) URLs. */
export function jwksOrigins(query: Request['query']): string[] {
  const raw = query.jwks;
  const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  const origins = new Set<string>();
  for (const value of values.slice(0, 4)) {
    if (typeof value !== 'string') continue;
    try {
      const url = new URL(value);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // Not a URL: the page says so; the policy stays as it is.
    }
  }
  return [...origins];
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
    index ??= readFileSync(indexFile);
    policy(pageDirectives(jwksOrigins(req.query)), req)(req, res, (error?: unknown) => {
      if (error) return next(error);
      res.setHeader('Cache-Control', 'no-cache');
      res.type('html').send(index);
    });
  });
  return router;
}
