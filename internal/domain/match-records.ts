/**
 * Hivekit's search results (hivekit-compat.md 7.2, hivekit-rest.md D3): one match record
 * per matching field value of an object or an area, with the offsets of the match. Pure.
 *
 * Matching: the search text occurs in the value case-insensitively (each code point
 * compared lower-cased, locale-independent), starting at the beginning of a word of the
 * value (its start, or after a character that is not a letter, digit or mark), or
 * anywhere when the text itself begins with such a character. So `scooter` matches
 * `city scooter` and `Object` matches `object-a-7`, but `cooter` matches neither. Accents
 * must match. The first occurrence gives the record; offsets are in UTF-16 code units of
 * the original value (JavaScript string indexes), `end` exclusive. Only string values
 * are searched: ids, labels, the string values of data and the string leaves of its
 * nested values (the record then names the top-level property and holds the leaf).
 */
import { compareCodePoints } from './filter.js';
import { forEachStringLeaf } from './search.js';
import type { Data, DataValue } from './types.js';

export type MatchField = 'id' | 'label' | 'data';
export type MatchType = 'object' | 'area';

export const MATCH_FIELDS: readonly MatchField[] = ['id', 'label', 'data'];

/** One matching value. */
export interface MatchRecord {
  id: string;
  type: MatchType;
  label: string | null;
  field: MatchField;
  value: string;
  start: number;
  end: number;
  /** The data property, for `field: 'data'` only. */
  property?: string;
  /** Higher is better (see scoreOf). */
  score: number;
}

/** What is searched of an entity. */
export interface Searchable {
  id: string;
  label: string | null;
  data: Data;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

const fold = (codePoint: number): string => String.fromCodePoint(codePoint).toLowerCase();

/** A search text, prepared once: its code points folded. */
export interface MatchTerm {
  folded: string[];
  /** The text begins with a letter, digit or mark: it must begin a word of the value. */
  wordStart: boolean;
}

export function matchTerm(text: string): MatchTerm {
  const chars = [...text];
  const first = chars[0];
  return { folded: chars.map((c) => fold(c.codePointAt(0) as number)), wordStart: first !== undefined && WORD_CHAR.test(first) };
}

/** The code point before index i of a text (undefined at 0). */
function charBefore(text: string, i: number): string | undefined {
  if (i === 0) return undefined;
  const low = text.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = text.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(i - 2, i);
  }
  return text.charAt(i - 1);
}

/** [start, end) of the first match of the term in the value, or null. */
export function findMatch(value: string, term: MatchTerm): [number, number] | null {
  const n = term.folded.length;
  if (n === 0) return null;
  for (let i = 0; i < value.length; ) {
    const first = value.codePointAt(i) as number;
    const step = first > 0xffff ? 2 : 1;
    const before = charBefore(value, i);
    if (!term.wordStart || before === undefined || !WORD_CHAR.test(before)) {
      let j = i;
      let k = 0;
      while (k < n && j < value.length) {
        const cp = value.codePointAt(j) as number;
        if (fold(cp) !== term.folded[k]) break;
        j += cp > 0xffff ? 2 : 1;
        k++;
      }
      if (k === n) return [i, j];
    }
    i += step;
  }
  return null;
}

const FIELD_WEIGHT: Readonly<Record<MatchField, number>> = { id: 2, label: 2, data: 1 };

/**
 * A record's score: the field's weight (id and label 2, data 1) times one plus the share
 * of the value the match covers (a whole-value match scores twice a match in a long
 * text). Rounded to 6 digits.
 */
export function scoreOf(field: MatchField, value: string, start: number, end: number): number {
  const share = value.length === 0 ? 1 : (end - start) / value.length;
  return Math.round(FIELD_WEIGHT[field] * (1 + share) * 1e6) / 1e6;
}

/**
 * The first string leaf of a nested value (document order) that the term matches, given
 * to `found`: one record per data property, as for a string value (its first occurrence).
 */
function firstMatchingLeaf(value: DataValue, term: MatchTerm, found: (leaf: string) => void): void {
  let done = false;
  forEachStringLeaf(value, (leaf) => {
    if (!done && findMatch(leaf, term) !== null) {
      done = true;
      found(leaf);
    }
  });
}

/** The match records of one entity, in field order (id, label, data in the data's key order). */
export function matchEntity(entity: Searchable, type: MatchType, term: MatchTerm, fields: ReadonlySet<MatchField>): MatchRecord[] {
  const out: MatchRecord[] = [];
  const add = (field: MatchField, value: string, property?: string): void => {
    const found = findMatch(value, term);
    if (found === null) return;
    const [start, end] = found;
    const record: MatchRecord = { id: entity.id, type, label: entity.label, field, value, start, end, score: scoreOf(field, value, start, end) };
    if (property !== undefined) record.property = property;
    out.push(record);
  };
  if (fields.has('id')) add('id', entity.id);
  if (fields.has('label') && entity.label !== null) add('label', entity.label);
  if (fields.has('data')) {
    for (const [key, value] of Object.entries(entity.data)) {
      if (typeof value === 'string') add('data', value, key);
      else if (typeof value === 'object') firstMatchingLeaf(value, term, (leaf) => add('data', leaf, key));
    }
  }
  return out;
}

const FIELD_ORDER: Readonly<Record<MatchField, number>> = { id: 0, label: 1, data: 2 };

const codePointCompare = compareCodePoints;

/** The best score of an entity's records. */
const best = (records: readonly MatchRecord[]): number => records.reduce((m, r) => Math.max(m, r.score), 0);

/**
 * Keeps the `max` best entities (by their best record, then id) of one type, every record
 * of each (hivekit-compat.md 12.2).
 */
export function keepBest(byEntity: readonly MatchRecord[][], max: number): MatchRecord[][] {
  const ranked = byEntity.filter((records) => records.length > 0);
  ranked.sort((a, b) => best(b) - best(a) || codePointCompare((a[0] as MatchRecord).id, (b[0] as MatchRecord).id));
  return ranked.slice(0, Math.max(0, max));
}

/** All records, best first: score, then objects before areas, id, field, property. */
export function rankRecords(records: MatchRecord[]): MatchRecord[] {
  return records.sort(
    (a, b) =>
      b.score - a.score ||
      (a.type === b.type ? 0 : a.type === 'object' ? -1 : 1) ||
      codePointCompare(a.id, b.id) ||
      FIELD_ORDER[a.field] - FIELD_ORDER[b.field] ||
      codePointCompare(a.property ?? '', b.property ?? ''),
  );
}
