/**
 * The v1 protocol over HTTP: `POST /v1/http` with a JSON array of actions. Errors of
 * the request itself (401, 413, 415, malformed JSON, a body that is not an array) are
 * HTTP errors with the v2 body, written by the REST error handler; errors of single
 * actions are results inside a 200. There is no push channel here, so `sub` fails.
 */
import express, { type Router } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/authenticator.js';
import type { Access } from '../../service/access.js';
import { encodeResults, parseActions } from '../actions/codec.js';
import type { Dispatcher } from '../actions/dispatcher.js';
import { authenticate } from '../rest/authenticate.js';
import { jsonBody } from '../rest/body.js';
import { methodNotAllowed } from '../rest/errors.js';

export const v1HttpPath = '/v1/http';

export interface V1HttpDeps {
  access: Access;
  dispatcher: Dispatcher;
  logger: Logger;
  maxBodyBytes: number;
  maxActions: number;
  /** LOCUS_AUTH_COOKIE_NAME: a cookie that carries the token; null: none. */
  authCookieName: string | null;
}

export function v1HttpRouter(deps: V1HttpDeps): Router {
  const router = express.Router();
  router
    .route(v1HttpPath)
    .post(
      authenticate(deps.access, deps.logger, { cookieName: deps.authCookieName }),
      ...jsonBody(deps.maxBodyBytes, 'array'),
      async (req, res) => {
        const parsed = parseActions(req.body, deps.maxActions);
        if (!parsed.ok) throw parsed.error;
        const principal = res.locals.principal as Principal;
        const results = await deps.dispatcher.dispatch(parsed.actions, { principal, sink: null });
        res.type('application/json').send(encodeResults(results));
      },
    )
    .all(methodNotAllowed(['POST']));
  return router;
}
