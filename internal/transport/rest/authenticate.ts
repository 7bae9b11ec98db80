/**
 * The REST and `/v1/http` authentication step: the request's token → its principal (in
 * `res.locals.principal`). A failure is logged at info with its reason and the source
 * address (never the token), then answered 401 by the error handler.
 *
 * Hivekit clients send the token in any of three places, so all three are read: the
 * `Authorization: Bearer` header (the preferred form), the query parameter `token`, and,
 * where a reader is given (REST v2), the `token` property of a POST, PUT or PATCH body.
 * Given in more than one place, the values must agree (400 otherwise): a request that
 * names two tokens is ambiguous about whose rights it uses. With a cookie name set
 * (LOCUS_AUTH_COOKIE_NAME), that cookie is the last resort: a browser sends it whether the
 * page means to or not, so it never overrides, nor conflicts with, a token given on purpose.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { bearerSecret } from '../../auth/authenticator.js';
import { invalid, LocusError } from '../../errors.js';
import type { Access } from '../../service/access.js';
import type { BodyReader } from './body.js';
import { requestIdOf, routeTemplateOf, sourceAddress } from './request-context.js';

const bodyMethods = new Set(['POST', 'PUT', 'PATCH']);
const jsonMediaType = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/** The secret each request authenticated with, for the body check; kept out of `res.locals`, which is easier to log by mistake. */
const presented = new WeakMap<Response, string>();

const disagree = (): LocusError =>
  invalid('the token is given in more than one place (Authorization header, token parameter, body) with different values');

function queryToken(req: Request): string | null {
  const value = (req.query as Record<string, unknown>).token;
  if (value === undefined) return null;
  if (typeof value !== 'string') throw invalid('parameter `token` given twice', 'invalid_query');
  return value;
}

function bodyToken(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const value = (body as Record<string, unknown>).token;
  return typeof value === 'string' ? value : null;
}

/** The value of the named cookie in a Cookie header (RFC 6265 syntax; a quoted value is unquoted). */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    const value = pair.slice(eq + 1).trim();
    const unquoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    return unquoted === '' ? null : unquoted;
  }
  return null;
}

interface SecretSources {
  readBody?: BodyReader;
  cookieName?: string | null;
}

async function presentedSecret(req: Request, res: Response, sources: SecretSources): Promise<string | null> {
  const header = bearerSecret(req.headers.authorization);
  const query = queryToken(req);
  if (header !== null && query !== null && header !== query) throw disagree();
  let secret = header ?? query;
  // The body is read before authentication only when it is the one place left to look:
  // a request with a header or parameter is still refused before its body is read.
  if (secret === null && sources.readBody !== undefined && bodyMethods.has(req.method)) {
    await sources.readBody(req, res);
    secret = bodyToken(req.body);
  }
  if (secret === null && sources.cookieName !== undefined && sources.cookieName !== null) {
    secret = cookieValue(req.headers.cookie, sources.cookieName);
    // Another site's page can make a browser POST a form, with its cookies, and no preflight
    // asks first; it cannot send a JSON media type without one, which CORS then governs.
    if (secret !== null && req.method === 'POST' && !jsonMediaType.test(req.get('content-type') ?? '')) {
      throw new LocusError('unsupported_media_type', 'a POST authenticated by cookie must be sent as application/json');
    }
  }
  return secret;
}

export function authenticate(access: Access, logger: Logger, sources: SecretSources = {}): RequestHandler {
  return async (req, res, next) => {
    let secret: string | null | undefined;
    try {
      secret = await presentedSecret(req, res, sources);
      res.locals.principal = await access.authenticate(secret, sourceAddress(req) ?? null);
      if (secret !== null) presented.set(res, secret);
    } catch (err) {
      if (err instanceof LocusError && err.code === 'unauthorized') {
        // For the metrics (observability/metrics/rest-metrics.ts): why it failed, never the token.
        res.locals.authFailure = secret === null ? 'missing' : 'invalid';
        logger.info(
          {
            reason: err.message,
            remoteAddress: sourceAddress(req),
            requestId: requestIdOf(res),
            method: req.method,
            route: routeTemplateOf(req, res),
          },
          'authentication failed',
        );
      }
      throw err;
    }
    next();
  };
}

/**
 * After the body is parsed: a `token` property is taken out before the body's strict key
 * check (it is not part of the entity), and must name the token the request authenticated with.
 */
export const stripBodyToken: RequestHandler = (req, res, next) => {
  const body = req.body as unknown;
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, 'token')) {
    const { token, ...rest } = body as Record<string, unknown>;
    if (token !== presented.get(res)) throw disagree();
    req.body = rest;
  }
  next();
};
