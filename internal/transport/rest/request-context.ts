/**
 * What the routers, the access log (access-log.ts) and the authentication log read about a
 * request: its path parameters, its principal, its id and the route template it matched
 * (the last three kept in `res.locals`).
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../auth/authenticator.js';

/** Reads a decoded path parameter (express decodes each encoded segment once). */
export function param(req: Request, name: string): string {
  const value = (req.params as Record<string, string | undefined>)[name];
  if (value === undefined) throw new Error(`route has no parameter ${name}`);
  return value;
}

/** The principal authenticate.ts found for the request. */
export function principalOf(res: Response): Principal {
  return res.locals.principal as Principal;
}

/** An incoming X-Request-Id is kept when it is this short and plain; otherwise one is made. */
const requestIdPattern = /^[A-Za-z0-9._:-]{1,64}$/;

export function acceptedRequestId(header: string | undefined): string | null {
  return header !== undefined && requestIdPattern.test(header) ? header : null;
}

export function requestIdOf(res: Response): string | undefined {
  return res.locals.requestId as string | undefined;
}

export function sourceAddress(req: Request): string | undefined {
  return req.socket.remoteAddress;
}

/**
 * Marks where a router is mounted, as a template (`/v2/realm/:realm`): express only keeps
 * the mounted path with its values (`/v2/realm/fleet`), and ids do not belong in logs.
 */
export function mountedAt(template: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.routeBase = template;
    next();
  };
}

/**
 * The route template a request matched (`/v2/realm/:realm/object/:id`); the mount's with
 * `/*` when it failed before a route matched (a 401); null when nothing matched.
 */
export function routeTemplateOf(req: Request, res: Response): string | null {
  const base = (res.locals.routeBase as string | undefined) ?? '';
  const route = (req as { route?: { path?: unknown } }).route;
  if (route !== undefined && typeof route.path === 'string') return base + route.path;
  return base === '' ? null : `${base}/*`;
}
