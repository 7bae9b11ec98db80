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
import { isNested } from '../../domain/data.js';
import { dataValueWords, objectSearchWords, searchWords } from '../../domain/search.js';
import type { Data, TrackedObject } from '../../domain/types.js';

function prefixed(key: number, words: readonly string[]): string {
  if (words.length === 0) return '';
  const prefix = `${key}x`;
  return prefix + words.join(` ${prefix}`);
}

/** A data value's words, and their indexed text for the realm key last asked for. */
interface ValueEntry {
  words: string[];
  key: number;
  text: string;
}

/**
 * The indexed text of one data value: its words, as objectSearchWords finds them in an
 * object holding only that value, prefixed for realm `key`. Data values repeat across
 * objects (kinds, drivers, states, small numbers), so short values are remembered, words
 * and text (bulk ingest spends much of its JavaScript time in Unicode normalisation and
 * joining otherwise). The text is rebuilt from the words when another realm asks.
 */
const valueCache = new Map<string | number | boolean, ValueEntry>();
const VALUE_CACHE_SIZE = 65_536;
const CACHED_TEXT_LENGTH = 64;

function valueText(key: number, value: Data[string]): string {
  // A nested value is its string leaves' words; such values are rarely shared, and a
  // cache keyed by object identity would only hold them alive.
  if (isNested(value)) return prefixed(key, dataValueWords(value));
  let entry = valueCache.get(value);
  if (entry === undefined) {
    const words = objectSearchWords({ id: '', label: null, location: null, data: { value }, seen: null });
    entry = { words, key, text: prefixed(key, words) };
    if (typeof value !== 'string' || value.length <= CACHED_TEXT_LENGTH) {
      if (valueCache.size >= VALUE_CACHE_SIZE) valueCache.clear();
      valueCache.set(value, entry);
    }
  } else if (entry.key !== key) {
    entry.key = key;
    entry.text = prefixed(key, entry.words);
  }
  return entry.text;
}

/**
 * The two indexed columns: `names` (words of id and label, ranked higher) and `terms`
 * (words of the data values). Together they are objectSearchWords(obj): the words of the
 * id, the label and each data value (objectSearchWords of an object with an empty id,
 * no label and one data value gives that value's words).
 */
export function searchColumns(key: number, obj: TrackedObject): [names: string, terms: string] {
  const names = searchWords(obj.id);
  if (obj.label !== null) searchWords(obj.label, names);
  let terms = '';
  for (const value of Object.values(obj.data)) {
    const text = valueText(key, value);
    if (text !== '') terms = terms === '' ? text : `${terms} ${text}`;
  }
  return [prefixed(key, names), terms];
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
