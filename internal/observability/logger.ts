/** Structured JSON logs (pino) on stdout. */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'locus' } });
}
