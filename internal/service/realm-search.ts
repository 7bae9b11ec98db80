/**
 * Hivekit's search over a realm's objects and areas (hivekit-compat.md 7.2, hivekit-rest.md
 * D3): match records (domain/match-records.ts), capped per entity kind.
 *
 * Objects are found through the store's full-text index: its candidates (every word of the
 * search text a prefix of a word of the object, accent-insensitive) hold every object
 * that matches, and the match rule then picks the records. Up to MAX_CANDIDATES of the
 * index's best candidates are looked at. Areas are few: all of the realm's are tested.
 */
import type { IdFilter } from '../auth/rights.js';
import { invalid } from '../errors.js';
import { keepBest, MATCH_FIELDS, matchEntity, matchTerm, rankRecords, type MatchField, type MatchRecord } from '../domain/match-records.js';
import { parseSearchQuery } from '../domain/search.js';
import { rejectUnknownParams } from '../domain/list-query.js';
import type { Realm } from '../domain/types.js';
import type { Store } from '../store/port.js';

/** Defaults of maxObjectResults and maxAreaResults. */
export const DEFAULT_MAX_RESULTS = 100;
/** The most of either. */
export const MAX_RESULTS = 10_000;
/** The most full-text candidates looked at for objects. */
const MAX_CANDIDATES = 10_000;
/** The most characters of a search text. */
export const MAX_SEARCH_TEXT = 1_000;

export interface RealmSearchQuery {
  text: string;
  fields: ReadonlySet<MatchField>;
  maxObjects: number;
  maxAreas: number;
}

function searchText(value: unknown, where: string): string {
  if (value === undefined || value === null || value === '') throw invalid(`${where} is required: the text to search for`, 'invalid_query');
  if (typeof value !== 'string') throw invalid(`${where} must be a string`, 'invalid_query');
  if (value.length > MAX_SEARCH_TEXT) throw invalid(`${where} is longer than ${MAX_SEARCH_TEXT} characters`, 'invalid_query');
  return value;
}

function fieldSet(names: readonly unknown[], where: string): Set<MatchField> {
  const out = new Set<MatchField>();
  for (const name of names) {
    const field = name === 'lab' ? 'label' : name === 'dat' ? 'data' : name;
    if (typeof field !== 'string' || !(MATCH_FIELDS as readonly string[]).includes(field)) {
      throw invalid(`${where} may list only id, label and data (got ${JSON.stringify(name)?.slice(0, 64) ?? String(name)})`, 'invalid_query');
    }
    out.add(field as MatchField);
  }
  if (out.size === 0) throw invalid(`${where} must name at least one of id, label, data`, 'invalid_query');
  return out;
}

function maxResults(value: unknown, where: string): number {
  if (value === undefined || value === null) return DEFAULT_MAX_RESULTS;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_RESULTS) {
    throw invalid(`${where} must be an integer from 0 to ${MAX_RESULTS}`, 'invalid_query');
  }
  return n;
}

/** v1 `rea sea` `dat`: `val`, `fie` (full names; `lab`/`dat` accepted), `maxObjectResults`, `maxAreaResults`; other keys ignored. */
export function parseV1SearchDat(dat: unknown): RealmSearchQuery {
  if (dat === undefined || dat === null || typeof dat !== 'object' || Array.isArray(dat)) throw invalid('dat must be an object with val, the text to search for', 'invalid_query');
  const fields = dat as Record<string, unknown>;
  let names: readonly unknown[] = MATCH_FIELDS;
  if (fields.fie !== undefined && fields.fie !== null) {
    if (!Array.isArray(fields.fie)) throw invalid('fie must be an array of field names (id, label, data)', 'invalid_query');
    names = fields.fie;
  }
  return {
    text: searchText(fields.val, 'val'),
    fields: fieldSet(names, 'fie'),
    maxObjects: maxResults(fields.maxObjectResults, 'maxObjectResults'),
    maxAreas: maxResults(fields.maxAreaResults, 'maxAreaResults'),
  };
}

const restParams = ['searchString', 'fields', 'maxObjectResults', 'maxAreaResults'] as const;

/** `GET /v2/realm/<r>/search?searchString=&fields=id,label,data&maxObjectResults=&maxAreaResults=` (strict). */
export function parseRestSearchParams(params: Record<string, unknown>): RealmSearchQuery {
  rejectUnknownParams(params, restParams);
  let names: readonly unknown[] = MATCH_FIELDS;
  if (params.fields !== undefined) {
    if (typeof params.fields !== 'string') throw invalid('fields must be one comma-separated list', 'invalid_query');
    names = params.fields.split(',');
  }
  return {
    text: searchText(params.searchString, 'searchString'),
    fields: fieldSet(names, 'fields'),
    maxObjects: maxResults(params.maxObjectResults, 'maxObjectResults'),
    maxAreas: maxResults(params.maxAreaResults, 'maxAreaResults'),
  };
}

export class RealmSearch {
  constructor(private readonly store: Store) {}

  /**
   * The match records of the realm's objects and areas, best first (rankRecords). `readable`
   * (auth/rights.ts readFilter; null: everything): only entities whose id passes, before the
   * caps are applied (the caps count readable entities).
   */
  async search(realm: Realm, query: RealmSearchQuery, readable: IdFilter | null = null): Promise<MatchRecord[]> {
    const term = matchTerm(query.text);
    const [objects, areas] = await Promise.all([this.objects(realm, query, term, readable), this.areas(realm, query, term, readable)]);
    return rankRecords([...objects, ...areas]);
  }

  private async objects(realm: Realm, query: RealmSearchQuery, term: ReturnType<typeof matchTerm>, readable: IdFilter | null): Promise<MatchRecord[]> {
    if (query.maxObjects === 0) return [];
    // The index's words of the text; a text without letters or digits finds no object.
    let words: string[];
    try {
      words = parseSearchQuery(query.text);
    } catch {
      return [];
    }
    let limit = Math.min(MAX_CANDIDATES, Math.max(100, query.maxObjects * 4));
    for (;;) {
      const hits = await this.store.objects.search(realm.id, { words, limit });
      const kept = readable === null ? hits : hits.filter((hit) => readable(hit.object.id));
      const matched = kept.map((hit) => matchEntity(hit.object, 'object', term, query.fields)).filter((records) => records.length > 0);
      if (matched.length >= query.maxObjects || hits.length < limit || limit >= MAX_CANDIDATES) {
        return keepBest(matched, query.maxObjects).flat();
      }
      limit = Math.min(MAX_CANDIDATES, limit * 4);
    }
  }

  private async areas(realm: Realm, query: RealmSearchQuery, term: ReturnType<typeof matchTerm>, readable: IdFilter | null): Promise<MatchRecord[]> {
    if (query.maxAreas === 0) return [];
    const matched: MatchRecord[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.store.areas.list(realm.id, cursor === undefined ? { limit: 10_000 } : { limit: 10_000, cursor });
      for (const area of page.items) {
        if (readable !== null && !readable(area.id)) continue;
        const records = matchEntity(area, 'area', term, query.fields);
        if (records.length > 0) matched.push(records);
      }
      if (page.next === null) break;
      cursor = page.next;
    }
    return keepBest(matched, query.maxAreas).flat();
  }
}
