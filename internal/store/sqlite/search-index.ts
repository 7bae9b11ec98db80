/**
 * What the SQLite full-text index (FTS5 table `object_fts`) holds for an object, and how
 * a search becomes an FTS5 query. The words come from domain/search.ts, the one
 * tokenizer: objectSearchWords(obj) is the words of the id, of the label and of the data
 * values, in that order. They are stored joined by spaces and indexed with FTS5's `ascii`
 * tokenizer, which splits on spaces (and other ASCII punctuation, which words never
 * hold) and lower-cases ASCII (words are lower case already): the index holds exactly
 * the words the domain computed, so FTS5 prefix matching is matchesSearch.
 *
 * Every stored word is prefixed by `<realm key>x` (the key is decimal digits, so the
 * first `x` ends it): a prefix query for `7xtrac` reaches only realm 7's words starting
 * with `trac`, and never wades through another realm's postings.
 */
import { objectSearchWords, searchWords } from '../../domain/search.js';
import type { TrackedObject } from '../../domain/types.js';

function prefixed(key: number, words: readonly string[]): string {
  if (words.length === 0) return '';
  const prefix = `${key}x`;
  return prefix + words.join(` ${prefix}`);
}

/**
 * Words of one data value, as objectSearchWords finds them in an object holding only that
 * value. Data values repeat across objects (kinds, drivers, states, small numbers), so the
 * words of short values are remembered (bulk ingest spends much of its JavaScript time in
 * Unicode normalisation otherwise).
 */
const valueWordsCache = new Map<string | number | boolean, string[]>();
const VALUE_CACHE_SIZE = 8192;
const CACHED_TEXT_LENGTH = 64;

function valueWords(value: string | number | boolean): string[] {
  let words = valueWordsCache.get(value);
  if (words === undefined) {
    words = objectSearchWords({ id: '', label: null, location: null, data: { value }, seen: null });
    if (typeof value !== 'string' || value.length <= CACHED_TEXT_LENGTH) {
      if (valueWordsCache.size >= VALUE_CACHE_SIZE) valueWordsCache.clear();
      valueWordsCache.set(value, words);
    }
  }
  return words;
}

/**
 * The two indexed columns: `names` (words of id and label, ranked higher) and `terms`
 * (words of the data values). Together they are objectSearchWords(obj): the words of the
 * id, the label and each data value (objectSearchWords of an object with an empty id,
 * no label and one data value gives that value's words).
 */
export function searchColumns(key: number, obj: TrackedObject): [names: string, terms: string] {
  const names = searchWords(obj.id);
  if (obj.label !== null) names.push(...searchWords(obj.label));
  const terms: string[] = [];
  for (const value of Object.values(obj.data)) {
    for (const word of valueWords(value)) terms.push(word);
  }
  return [prefixed(key, names), prefixed(key, terms)];
}

/** True when the indexed text of two states of an object is the same (no index write needed). */
export function sameSearchText(a: TrackedObject, b: TrackedObject): boolean {
  return a.label === b.label && a.data === b.data;
}

/** The FTS5 query: every word as a prefix, all required (implicit AND). */
export function searchMatch(key: number, words: readonly string[]): string {
  // Words hold only letters and digits, never a double quote.
  return words.map((word) => `"${key}x${word}"*`).join(' ');
}
