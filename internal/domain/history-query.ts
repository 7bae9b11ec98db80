/**
 * The Hivekit forms of a history query (hivekit-rest.md D5, D12; hivekit-compat.md 7.1,
 * 12.4): bounds in ISO 8601 (up to nanosecond fractions; digits below the millisecond are
 * dropped) or Unix milliseconds, both inclusive, on the fix time. Pure.
 */
import { invalid } from '../errors.js';
import { parsePageQuery, rejectUnknownParams, type HistoryParams, type ListLimits } from './list-query.js';
import { normalizeTime } from './time.js';

/** The first and last instant a history bound can name (years 0000–9999, as normalizeTime). */
const EARLIEST_MS = new Date('0000-01-01T00:00:00.000Z').getTime();
const LATEST_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

const UNIX_MS = /^-?\d+$/;

/**
 * A history bound: an ISO 8601 date-time with `Z` or an offset, or Unix time in
 * milliseconds (a JSON integer, or a query string of digits). Returns the normalised ISO time.
 */
export function parseHistoryBound(value: unknown, where: string): string {
  let ms: number | null = null;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw invalid(`${where} must be an ISO 8601 date-time or Unix time in whole milliseconds (got ${value})`, 'invalid_query');
    ms = value;
  } else if (typeof value === 'string' && UNIX_MS.test(value)) {
    ms = Number(value);
  }
  if (ms === null) return normalizeTime(value, where, 'invalid_query');
  if (ms < EARLIEST_MS || ms > LATEST_MS) {
    throw invalid(`${where} is out of range: Unix milliseconds must name a time in the years 0000–9999 (got ${String(value)})`, 'invalid_query');
  }
  return new Date(ms).toISOString();
}

function checkOrder(out: { from?: string; to?: string }, startName: string, endName: string): void {
  if (out.from !== undefined && out.to !== undefined && out.from > out.to) {
    throw invalid(`${startName} (${out.from}) is after ${endName} (${out.to})`, 'invalid_query');
  }
}

const restParams = ['start', 'end', 'from', 'to', 'limit', 'cursor', 'order'] as const;

/**
 * `GET /v2/realm/<r>/history/<id>`: `start`/`end` (or their aliases `from`/`to`, not both
 * for one side), `limit`, `cursor`, `order` (`asc` default, `desc`).
 */
export function parseRestHistoryParams(params: Record<string, unknown>, limits: ListLimits): HistoryParams {
  rejectUnknownParams(params, restParams);
  const out: HistoryParams = { ...parsePageQuery(params, limits), order: 'asc' };
  const side = (name: string, alias: string): string | undefined => {
    if (params[name] !== undefined && params[alias] !== undefined) throw invalid(`give either ${name} or ${alias}, not both`, 'invalid_query');
    const key = params[name] !== undefined ? name : alias;
    return params[key] === undefined ? undefined : parseHistoryBound(params[key], key);
  };
  const from = side('start', 'from');
  const to = side('end', 'to');
  if (from !== undefined) out.from = from;
  if (to !== undefined) out.to = to;
  checkOrder(out, params.start !== undefined ? 'start' : 'from', params.end !== undefined ? 'end' : 'to');
  if (params.order !== undefined) {
    if (params.order !== 'asc' && params.order !== 'desc') throw invalid('order must be asc or desc', 'invalid_query');
    out.order = params.order;
  }
  return out;
}

/**
 * v1 `his rea` `dat`: `sta`, `end` (ISO 8601 or Unix ms; each optional), and the locus
 * extension `nxt` (the cursor of the previous reply). Other keys are ignored
 * (hivekit-compat.md 3.7). Pages hold up to `maxPage` entries, oldest first.
 */
export function parseV1HistoryDat(dat: unknown, maxPage: number): HistoryParams {
  if (dat !== undefined && dat !== null && (typeof dat !== 'object' || Array.isArray(dat))) {
    throw invalid('dat must be an object with sta and end', 'invalid_query');
  }
  const fields = (dat ?? {}) as Record<string, unknown>;
  const out: HistoryParams = { limit: maxPage, order: 'asc' };
  if (fields.sta !== undefined && fields.sta !== null) out.from = parseHistoryBound(fields.sta, 'sta');
  if (fields.end !== undefined && fields.end !== null) out.to = parseHistoryBound(fields.end, 'end');
  checkOrder(out, 'sta', 'end');
  if (fields.nxt !== undefined && fields.nxt !== null) {
    if (typeof fields.nxt !== 'string' || fields.nxt === '') throw invalid('nxt must be the cursor of a previous reply', 'invalid_cursor');
    out.cursor = fields.nxt;
  }
  return out;
}
