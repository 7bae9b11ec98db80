/** The one place REST writes an error: catalogue status, v2 error body, headers. */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { errorBody, LocusError, toLocusError } from '../../errors.js';

/** Errors raised by express and its body parser, mapped once to catalogue codes. */
function fromExpress(err: unknown): LocusError | null {
  if (typeof err !== 'object' || err === null || !('type' in err || 'status' in err)) return null;
  const { type, status } = err as { type?: unknown; status?: unknown };
  switch (type) {
    case 'entity.too.large':
      return new LocusError('too_large', 'the request body is too large');
    case 'entity.parse.failed':
      return new LocusError('invalid_json', 'the request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new LocusError('unsupported_media_type', 'the request body must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new LocusError('invalid_request', 'the request body could not be read');
    default:
      // The router reports malformed percent-encoding in a path as a 400.
      if (status === 400) return new LocusError('invalid_request', 'the request path is malformed');
      return null;
  }
}

/** Anything a route or express threw, as a LocusError. */
export function requestError(err: unknown): LocusError {
  return err instanceof LocusError ? err : (fromExpress(err) ?? toLocusError(err));
}

/**
 * The last handler of a router: a request's failure answered with its status, headers
 * (WWW-Authenticate on 401) and `bodyOf` it; an internal one logged. A failure after the
 * headers went out ends the connection.
 */
export function errorHandler(logger: Logger, bodyOf: (error: LocusError) => object = errorBody): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const error = requestError(err);
    if (error.code === 'internal') logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(error.status).set(error.headers).json(bodyOf(error));
  };
}

/**
 * An object or area path with more segments than its routes: most likely an id that holds
 * a `/` sent unencoded (`/object/truck/1` for the id `truck/1`).
 */
const UNENCODED_ID = /^(\/v2\/realm\/[^/]+\/(?:object|area)\/)([^/]+\/.+)$/;

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  const path = req.path.slice(0, 256);
  let message = `no route for ${req.method} ${path}`;
  const unencoded = UNENCODED_ID.exec(path);
  if (unencoded !== null) {
    const [, prefix = '', rest = ''] = unencoded;
    message += `; encode a / in an id as %2F (e.g. ${prefix}${rest.replaceAll('/', '%2F')})`;
  }
  next(new LocusError('not_found', message));
};

/** `/v1/ws` asked for without a WebSocket upgrade: 426 with the protocol to upgrade to. */
export const upgradeRequired: RequestHandler = (_req, _res, next) => {
  next(
    new LocusError('upgrade_required', 'this endpoint speaks the v1 protocol over WebSocket: send a WebSocket upgrade request (Upgrade: websocket)', {
      headers: { Upgrade: 'websocket' },
    }),
  );
};

/** For a known path: 405 with the methods it has. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    next(
      new LocusError('method_not_allowed', `${req.method} is not allowed here; use ${allowed.join(', ')}`, {
        headers: { Allow: allowed.join(', ') },
      }),
    );
  };
}
