/**
 * CORS for browser clients (Hivekit's self-hosted server has it behind `enableCors`), on when
 * LOCUS_CORS_ORIGINS lists origins. Only the APIs a browser app calls take part: REST v2 and
 * the v1 action protocol over HTTP. A request from an origin not listed gets no CORS header,
 * so the browser keeps the answer from the page.
 */
import type { RequestHandler } from 'express';

const corsPaths = /^\/(?:v2\/|v1\/http\/?$|api\/v1(?:\/|$))/;

const allowMethods = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const allowHeaders = 'Authorization, Content-Type, X-Request-Id';
const exposeHeaders = 'X-Next-Cursor, X-Request-Id, Retry-After';
/** How long a browser may reuse a preflight answer, in seconds. */
const maxAgeSeconds = '600';

/**
 * `credentials`: cookie authentication is on (LOCUS_AUTH_COOKIE_NAME), so an origin listed by
 * name may send cookies; browsers never send them to a `*` answer.
 */
export function cors(origins: readonly string[], options: { credentials: boolean }): RequestHandler {
  const listed = new Set(origins);
  const anyOrigin = listed.has('*');
  return (req, res, next) => {
    if (!corsPaths.test(req.path)) {
      next();
      return;
    }
    // The answer depends on the Origin header whenever it may echo one back.
    res.vary('Origin');
    const origin = req.get('origin');
    if (origin === undefined || !(anyOrigin || listed.has(origin))) {
      next();
      return;
    }
    res.set('Access-Control-Allow-Origin', listed.has(origin) ? origin : '*');
    if (options.credentials && listed.has(origin)) res.set('Access-Control-Allow-Credentials', 'true');
    if (req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined) {
      res.set({
        'Access-Control-Allow-Methods': allowMethods,
        'Access-Control-Allow-Headers': allowHeaders,
        'Access-Control-Max-Age': maxAgeSeconds,
      });
      res.status(204).end();
      return;
    }
    res.set('Access-Control-Expose-Headers', exposeHeaders);
    next();
  };
}
