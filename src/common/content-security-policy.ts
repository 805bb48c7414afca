import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

/** CSP directives in helmet's form (camelCase names, arrays of sources). */
export type CspDirectives = Record<string, string[]>;

/**
 * helmet's defaults, with what the served pages need: Swagger UI (/docs) styles itself inline and
 * shows data: images. An API answering JSON needs nothing more.
 */
export const DEFAULT_CSP_DIRECTIVES: CspDirectives = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  frameAncestors: ["'none'"],
};

/**
 * A Content-Security-Policy middleware for `directives`. `upgrade-insecure-requests` is sent only on
 * a request that came over https (`req.secure`, which honours express `trust proxy`, so a request a
 * trusted proxy forwards with `X-Forwarded-Proto: https` counts): on a page opened over plain http the
 * directive would make the browser fetch the page's own scripts over https, which the server does not
 * speak, and the page would stay blank. A per-path policy is one more call with its own directives.
 */
export function contentSecurityPolicy(directives: CspDirectives = DEFAULT_CSP_DIRECTIVES) {
  const overHttps = helmet.contentSecurityPolicy({ directives: { ...directives, upgradeInsecureRequests: [] } });
  const overHttp = helmet.contentSecurityPolicy({ directives: { ...directives, upgradeInsecureRequests: null } });
  return (req: Request, res: Response, next: NextFunction): void => {
    (req.secure ? overHttps : overHttp)(req, res, next);
  };
}
