/** JSON request bodies: 415 for another media type, 413 over the limit, 400 when malformed. */
import express, { type RequestHandler } from 'express';
import { LocusError } from '../../errors.js';

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function jsonBody(maxBodyBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (hasBody(req) && req.is(['application/json', '+json']) === false) {
      next(new LocusError('unsupported_media_type', 'the request body must be application/json'));
      return;
    }
    next();
  };
  const parse = express.json({ limit: maxBodyBytes, strict: true, type: () => true });
  return [requireJson, parse];
}
