/**
 * JSON request bodies: 415 for another media type, 413 over the limit, 400 when malformed
 * or when valid JSON of another type than the endpoint takes (`null`, `"hi"`, `5`).
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import { describe } from '../../domain/ids.js';
import { LocusError } from '../../errors.js';

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The body parser's strict mode rejects a top-level value that is not an object or array
 * as a parse failure, as it does a syntax error: tell the two apart, so that valid JSON of
 * the wrong type is not reported as "not valid JSON".
 */
function parseFailure(err: unknown, expected: 'object' | 'array'): unknown {
  if (typeof err !== 'object' || err === null || (err as { type?: unknown }).type !== 'entity.parse.failed') return err;
  const raw = (err as { body?: unknown }).body;
  if (typeof raw !== 'string') return err;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return err; // a real syntax error: errors.ts maps it to invalid_json
  }
  const what = expected === 'array' ? 'a JSON array' : 'a JSON object';
  return new LocusError('invalid_request', `the request body must be ${what} (got ${describe(value)})`, { cause: err });
}

/** Reads a request's JSON body once; resolves to the error that stopped it, or undefined. */
export type BodyReader = (req: Request, res: Response) => Promise<unknown>;

/**
 * The outcome of each request's body read: authentication may read the body first (for a
 * `token` property), and the route's body step then reports that same outcome.
 */
const outcomes = new WeakMap<Request, Promise<unknown>>();

export function bodyReader(maxBodyBytes: number, expected: 'object' | 'array' = 'object'): BodyReader {
  const parseJson = express.json({ limit: maxBodyBytes, strict: true, type: () => true });
  const read = (req: Request, res: Response): Promise<unknown> =>
    new Promise((resolve) => {
      if (hasBody(req) && req.is(['application/json', '+json']) === false) {
        resolve(new LocusError('unsupported_media_type', 'the request body must be application/json'));
        return;
      }
      parseJson(req, res, (err?: unknown) => {
        resolve(err === undefined || err === null ? undefined : parseFailure(err, expected));
      });
    });
  return (req, res) => {
    let outcome = outcomes.get(req);
    if (outcome === undefined) {
      outcome = read(req, res);
      outcomes.set(req, outcome);
    }
    return outcome;
  };
}

/** Parses a JSON body; `expected` names the top-level type the endpoint takes, for the message when another is sent. */
export function jsonBody(maxBodyBytes: number, expected: 'object' | 'array' = 'object'): RequestHandler[] {
  return [bodyStep(bodyReader(maxBodyBytes, expected))];
}

/** The route step of a reader: the body parsed, or its error passed on. */
export function bodyStep(read: BodyReader): RequestHandler {
  return async (req, res, next) => {
    const error = await read(req, res);
    next(error ?? undefined);
  };
}
