/** Parsing of list parameters shared by REST query strings and v1 `lis`/`sea`/`his` payloads. */
import { invalid, type ErrorCode } from '../errors.js';
import { parseFilter } from './filter.js';
import { parseShape, parseShapeParam } from './shape.js';
import { normalizeTime } from './time.js';
import type { FilterCondition, Shape } from './types.js';

export interface ListLimits {
  maxPage: number;
}

export interface PageQuery {
  limit: number;
  cursor?: string;
}

export interface ObjectListParams extends PageQuery {
  /** Data fields to include; null: no `data` key in entries. */
  fields: string[] | null;
}

export const defaultPageSize = 1000;
/** Search answers hold at most this many entries unless `limit` says otherwise. */
export const defaultSearchLimit = 100;

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be a single string`, 'invalid_query');
  return value;
}

export function parseLimit(value: unknown, maxPage: number, defaultLimit: number = defaultPageSize): number {
  if (value === undefined) return Math.min(defaultLimit, maxPage);
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,9}$/.test(text)) {
    throw invalid(`limit must be an integer between 1 and ${maxPage}`, 'invalid_query');
  }
  const limit = Number(text);
  if (limit < 1 || limit > maxPage) throw invalid(`limit must be an integer between 1 and ${maxPage}`, 'invalid_query');
  return limit;
}

export function parseCursor(value: unknown): string | undefined {
  const cursor = optionalString(value, 'cursor');
  if (cursor === '') throw invalid('cursor must not be empty', 'invalid_cursor');
  return cursor;
}

/** `fields=a,b` (or an array of names in v1). An empty value means no fields. */
export function parseFields(value: unknown): string[] | null {
  if (value === undefined || value === '') return null;
  const names = Array.isArray(value) ? (value as unknown[]) : typeof value === 'string' ? value.split(',') : null;
  if (names === null) throw invalid('fields must be a comma-separated string', 'invalid_query');
  const out: string[] = [];
  for (const name of names) {
    if (typeof name !== 'string' || name === '') throw invalid('fields must not contain an empty name', 'invalid_query');
    out.push(name);
  }
  return [...new Set(out)];
}

/** The code of a bad value of each query parameter (invalid_query for the others). */
const PARAM_CODES: Readonly<Record<string, ErrorCode>> = { filter: 'invalid_filter', shape: 'invalid_shape', cursor: 'invalid_cursor' };

/**
 * Rejects a query string parameter given more than once (`limit=1&limit=2`), which a
 * query string parser gives as an array: which of the values was meant is not known.
 */
export function rejectRepeatedParams(params: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) {
      const times = value.length === 2 ? 'twice' : `${value.length} times`;
      throw invalid(`parameter \`${key.slice(0, 64)}\` given ${times}; give each query parameter once`, PARAM_CODES[key] ?? 'invalid_query');
    }
  }
}

/** Rejects parameters this endpoint does not know, so that a typo is not silently ignored. */
export function rejectUnknownParams(params: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(params)) {
    if (!known.includes(key)) throw invalid(`unknown query parameter "${key.slice(0, 64)}"`, 'invalid_query');
  }
}

export function parsePageQuery(params: Record<string, unknown>, limits: ListLimits): PageQuery {
  const cursor = parseCursor(params.cursor);
  const limit = parseLimit(params.limit, limits.maxPage);
  return cursor === undefined ? { limit } : { limit, cursor };
}

/** `filter=` (the filter grammar of domain/filter.ts); absent or empty: no conditions. */
export function parseFilterParam(value: unknown, maxConditions: number): FilterCondition[] {
  if (value === undefined) return [];
  if (typeof value !== 'string') throw invalid('filter must be a single string', 'invalid_filter');
  return parseFilter(value, maxConditions);
}

/**
 * `shape=`: a shape as JSON text (a query string), or in a v1 payload also the shape
 * object itself. Absent or empty: no shape.
 */
export function parseShapeValue(value: unknown, maxVertices: number): Shape | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') return parseShapeParam(value, maxVertices);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return parseShape(value, maxVertices);
  throw invalid('shape must be a shape object or its JSON text, such as {"cx":13.4,"cy":52.5,"r":500}', 'invalid_shape');
}

/** A search's `limit`: default 100, 1..maxPage. */
export function parseSearchLimit(value: unknown, maxPage: number): number {
  return parseLimit(value, maxPage, defaultSearchLimit);
}

export interface HistoryParams {
  from?: string;
  to?: string;
  limit: number;
  cursor?: string;
  order: 'asc' | 'desc';
}

/** History parameters: `from`/`to` (ISO 8601, inclusive), `limit`, `cursor`, `order` (`asc`, the default, or `desc`). */
export function parseHistoryQuery(params: Record<string, unknown>, limits: ListLimits): HistoryParams {
  const out: HistoryParams = { ...parsePageQuery(params, limits), order: 'asc' };
  if (params.from !== undefined) out.from = normalizeTime(params.from, 'from', 'invalid_query');
  if (params.to !== undefined) out.to = normalizeTime(params.to, 'to', 'invalid_query');
  if (out.from !== undefined && out.to !== undefined && out.from > out.to) {
    throw invalid(`from (${out.from}) is after to (${out.to})`, 'invalid_query');
  }
  const order = optionalString(params.order, 'order');
  if (order !== undefined) {
    if (order !== 'asc' && order !== 'desc') throw invalid('order must be asc or desc', 'invalid_query');
    out.order = order;
  }
  return out;
}
