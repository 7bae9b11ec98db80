/**
 * The REST and `/v1/http` authentication step: the request's bearer token → its principal
 * (in `res.locals.principal`). A failure is logged at info with its reason and the source
 * address (never the token), then answered 401 by the error handler.
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { bearerSecret } from '../../auth/authenticator.js';
import { LocusError } from '../../errors.js';
import type { Access } from '../../service/access.js';
import { requestIdOf, routeTemplateOf, sourceAddress } from './request-context.js';

export function authenticate(access: Access, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.principal = await access.authenticate(bearerSecret(req.headers.authorization), sourceAddress(req) ?? null);
    } catch (err) {
      if (err instanceof LocusError && err.code === 'unauthorized') {
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
