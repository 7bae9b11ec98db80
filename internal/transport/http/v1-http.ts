/**
 * The v1 protocol over HTTP (compat 1.3): `POST /v1/http` (canonical) or `POST /api/v1`
 * (Hivekit's client suite), with a JSON array of messages; the reply is a JSON array of
 * the replies of the messages that have one, in order, with or without `cid` (a successful
 * `set` has none; `[]` when none is due). Writes are applied (committed)
 * before the response is sent, so the next request reads them. Errors of the request
 * itself (401, 413, 415, malformed JSON, a body that is not an array) are HTTP errors whose
 * body carries both forms: Hivekit's `{res:"err", err, erc}`, which the client reads, and
 * locus's v2 `{result:"error", error:{code, message}}`. There is no push channel here, so
 * subscriptions fail.
 */
import express, { type Router } from 'express';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/authenticator.js';
import { errorBody, type LocusError } from '../../errors.js';
import type { Access } from '../../service/access.js';
import { encodeReplies, frameError, parseFrameValue } from '../actions/codec.js';
import type { Dispatcher } from '../actions/dispatcher.js';
import { authenticate } from '../rest/authenticate.js';
import { jsonBody } from '../rest/body.js';
import { errorHandler, methodNotAllowed } from '../rest/errors.js';

export const v1HttpPath = '/v1/http';
/** Every path of the HTTP action endpoint: `/v1/http` and `/api/v1`. */
export const v1HttpPaths: readonly string[] = [v1HttpPath, '/api/v1'];

export interface V1HttpDeps {
  access: Access;
  dispatcher: Dispatcher;
  logger: Logger;
  maxBodyBytes: number;
  maxActions: number;
  /** LOCUS_AUTH_COOKIE_NAME: a cookie that carries the token; null: none. */
  authCookieName: string | null;
}

/** The body of a failed v1-over-HTTP request: the v1 frame error and the REST error body in one object. */
const v1ErrorBody = (error: LocusError): object => ({ ...frameError(error), ...errorBody(error) });

export function v1HttpRouter(deps: V1HttpDeps): Router {
  const router = express.Router();
  // One route per path, so that logs name the path the request used.
  for (const path of v1HttpPaths) {
    router
      .route(path)
      .post(
        authenticate(deps.access, deps.logger, { cookieName: deps.authCookieName }),
        ...jsonBody(deps.maxBodyBytes, 'array'),
        async (req, res) => {
          const parsed = parseFrameValue(req.body, deps.maxActions);
          if (!parsed.ok) throw parsed.error;
          const principal = res.locals.principal as Principal;
          const replies = await deps.dispatcher.dispatch(parsed.items, { principal, connection: null, sink: null });
          res.type('application/json').send(encodeReplies(replies));
        },
      )
      .all(methodNotAllowed(['POST']));
  }
  router.use([...v1HttpPaths], errorHandler(deps.logger, v1ErrorBody));
  return router;
}
