/**
 * One JSON line per HTTP request at level info (LOCUS_LOG_LEVEL=warn silences them): method,
 * route template, status, duration, realm, request id and source address. Never the raw
 * path or query (they may hold ids or a `token`), a header or a body. Also gives each
 * request an id, returned in `X-Request-Id`.
 */
import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
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

export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const requestId = acceptedRequestId(req.get('x-request-id')) ?? randomBytes(8).toString('hex');
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    let logged = false;
    const log = (): void => {
      if (logged) return;
      logged = true;
      logger.info(
        {
          requestId,
          method: req.method,
          route: routeTemplateOf(req, res),
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          realm: realmIdOf(res),
          remoteAddress: sourceAddress(req),
          // The client went away before the response was written whole.
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'http request',
      );
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}
