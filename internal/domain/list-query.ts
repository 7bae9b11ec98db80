/** Parsing of list parameters shared by REST query strings and v1 `lis` payloads. */
import { invalid } from '../errors.js';

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

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be a single string`, 'invalid_query');
  return value;
}

export function parseLimit(value: unknown, maxPage: number): number {
  if (value === undefined) return Math.min(defaultPageSize, maxPage);
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
