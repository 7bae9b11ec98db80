/**
 * One JSON line per HTTP request at level info (LOCUS_LOG_LEVEL=warn silences them): method,
 * route template, status, duration, realm, request id and source address. Never the raw
 * path or query (they may hold ids or a `token`), a header or a body. Also gives each
 * request an id, returned in `X-Request-Id`.
 *
 * Its finish hook is the only one of a request: an observer of answered requests (the
 * metrics') is called from it with the same duration, so observing costs no listener and no
 * clock read of its own.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/authenticator.js';
import type { Realm } from '../../domain/types.js';
import { acceptedRequestId, routeTemplateOf, sourceAddress } from './request-context.js';

/** The realm a request entered (its id), or its principal's realm; undefined when neither is known. */
export function realmIdOf(res: Response): string | undefined {
  const realm = res.locals.realm as Realm | undefined;
  if (realm !== undefined) return realm.id;
  return (res.locals.principal as Principal | undefined)?.realm ?? undefined;
}

/** Told of each request written whole (not of one whose client went away first), once, with its duration. */
export type AnsweredRequestObserver = (req: Request, res: Response, seconds: number) => void;

export function accessLog(logger: Logger, answered: AnsweredRequestObserver | null = null): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const requestId = acceptedRequestId(req.get('x-request-id')) ?? randomBytes(8).toString('hex');
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    let logged = false;
    const log = (): void => {
      if (logged) return;
      logged = true;
      const ms = performance.now() - started;
      const whole = res.writableFinished;
      if (whole) answered?.(req, res, ms / 1000);
      logger.info(
        {
          requestId,
          method: req.method,
          route: routeTemplateOf(req, res),
          status: res.statusCode,
          durationMs: ms,
          realm: realmIdOf(res),
          remoteAddress: sourceAddress(req),
          // The client went away before the response was written whole.
          ...(whole ? {} : { aborted: true }),
        },
        'http request',
      );
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}
