/**
 * Structured JSON logs (pino) on stdout: every line the server writes there is one JSON
 * object; written inside a traced span (tracing on), it carries `trace_id` and `span_id`.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { mergeTraceFields, traceFields } from './tracing/log-fields.js';

/**
 * Paths blanked wherever they appear in a log line. Nothing logs a request's headers or a
 * token today; these keep a later `logger.info({ req })` or `{ headers }` from leaking one.
 */
const redactPaths = [
  'authorization',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
  'req.headers.cookie',
  'token',
  '*.token',
  // Signing-key secrets (admin API answers, LOCUS_JWT_SECRET in a config object): never logged.
  'secret',
  '*.secret',
  'jwtSecret',
  '*.jwtSecret',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'locus' },
    redact: { paths: redactPaths, censor: '[redacted]' },
    mixin: traceFields,
    mixinMergeStrategy: mergeTraceFields,
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
