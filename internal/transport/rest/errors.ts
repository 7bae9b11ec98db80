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

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const error = err instanceof LocusError ? err : (fromExpress(err) ?? toLocusError(err));
    if (error.code === 'internal') logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(error.status).set(error.headers).json(errorBody(error));
  };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new LocusError('not_found', `no route for ${req.method} ${req.path.slice(0, 256)}`));
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
