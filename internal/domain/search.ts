/**
 * Full-text search words: THE tokenizer and normaliser for query words and object words,
 * and the matcher that is the oracle for the stores' indexes (SQLite FTS5). Pure.
 *
 * A word is a maximal run of Unicode letters and digits (`\p{L}`, `\p{N}`; combining
 * marks `\p{M}` inside a word belong to it), normalised case- and accent-insensitively:
 * NFKD, combining marks dropped, lower-cased (locale-independent `toLowerCase`), final
 * sigma `ς` folded to `σ`. Compatibility characters may decompose into several words
 * (`½` gives `1` and `2`). Every word holds only letters and digits, and
 * `searchWords(w)` is `[w]` for every word `w` it returns, so a store may index the words
 * joined by spaces with a tokenizer that splits on spaces alone (e.g. FTS5 `ascii`).
 */
import { invalid } from '../errors.js';
import type { DataValue, TrackedObject } from './types.js';

/** Most words one search query may have. */
export const MAX_QUERY_WORDS = 32;

/**
 * A raw word: starts with a letter or digit, continues with letters, digits and marks.
 * Sticky: searchWords matches it at one position, set through lastIndex.
 */
const RAW_WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/uy;
const MARKS = /\p{M}/gu;
const WORD = /[\p{L}\p{N}]+/gu;

function normalise(raw: string): string {
  return raw.normalize('NFKD').replace(MARKS, '').toLowerCase().normalize('NFKD').replace(MARKS, '').replace(/ς/g, 'σ');
}

/** ASCII letters and digits: the only ASCII characters in `\p{L}`, `\p{N}` or `\p{M}`. */
function isAsciiWordChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
}

/**
 * The normalised words of a text, in order (repeats kept), appended to `out` when given.
 *
 * ASCII is scanned by char code: its words need only lower-casing, and every other ASCII
 * character separates words. At a code unit ≥ 0x80 the raw word there (or the one the
 * current ASCII run begins) is matched with RAW_WORD and normalised; the scan goes on
 * after it. Matching RAW_WORD over the whole text gives the same raw words, just slower.
 */
export function searchWords(text: string, out: string[] = []): string[] {
  let start = -1; // where the current ASCII word began, -1 between words
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (isAsciiWordChar(c)) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        out.push(text.slice(start, i).toLowerCase());
        start = -1;
      }
      i++;
      continue;
    }
    RAW_WORD.lastIndex = start >= 0 ? start : i;
    const raw = RAW_WORD.exec(text)?.[0];
    if (raw === undefined) {
      // Not a letter or digit: a separator. Skipping one code unit of a surrogate pair is
      // fine, the low surrogate after it cannot start a word either.
      i++;
      continue;
    }
    const end = RAW_WORD.lastIndex;
    if (end === i) {
      out.push(raw.toLowerCase()); // the ASCII word before a non-ASCII separator
    } else {
      // Normalising may turn one word into text with separators (`½` → `1⁄2`): split again.
      for (const [word] of normalise(raw).matchAll(WORD)) out.push(word);
    }
    start = -1;
    i = end;
  }
  if (start >= 0) out.push(text.slice(start).toLowerCase());
  return out;
}

/**
 * Every string leaf of a nested value (an object's values, an array's elements, at any
 * depth), in document order, passed to `each`. Keys, numbers, booleans and nulls inside a
 * nested value are not its text (decisions.md: search indexes the string leaves).
 */
export function forEachStringLeaf(value: DataValue, each: (text: string) => void): void {
  if (typeof value === 'string') each(value);
  else if (Array.isArray(value)) for (const item of value) forEachStringLeaf(item, each);
  else if (typeof value === 'object' && value !== null) for (const key of Object.keys(value)) forEachStringLeaf(value[key] as DataValue, each);
}

/**
 * The words of one data value: a string's words, a number's (as its JSON text: 12.5 gives
 * `12` and `5`), those of a nested value's string leaves; none for a boolean. Appended to
 * `out` when given.
 */
export function dataValueWords(value: DataValue, out: string[] = []): string[] {
  if (typeof value === 'string') searchWords(value, out);
  else if (typeof value === 'number') searchWords(JSON.stringify(value), out);
  else if (typeof value === 'object' && value !== null) forEachStringLeaf(value, (text) => searchWords(text, out));
  return out;
}

/**
 * The words an object is found by: those of its id, its label and every data value
 * (dataValueWords), in that order, repeats kept. Data keys and boolean values are not
 * searched.
 */
export function objectSearchWords(obj: TrackedObject): string[] {
  const words = searchWords(obj.id);
  if (obj.label !== null) searchWords(obj.label, words);
  for (const value of Object.values(obj.data)) dataValueWords(value, words);
  return words;
}

/** True when every query word is a prefix of some word of the object (`trac` finds `Tractor`). */
export function matchesSearch(obj: TrackedObject, queryWords: readonly string[]): boolean {
  if (queryWords.length === 0) return true;
  const words = objectSearchWords(obj);
  return queryWords.every((q) => words.some((w) => w.startsWith(q)));
}

/**
 * The words of the search parameter `q`, repeats removed (first occurrence order).
 * `invalid_query` when q is missing or not a string, has no letter or digit, or has more
 * than 32 distinct words.
 */
export function parseSearchQuery(q: unknown): string[] {
  if (q === undefined) throw invalid('q is required: the text to search for', 'invalid_query');
  if (typeof q !== 'string') throw invalid('q must be a single string', 'invalid_query');
  const words = [...new Set(searchWords(q))];
  if (words.length === 0) throw invalid('q must contain at least one letter or digit', 'invalid_query');
  if (words.length > MAX_QUERY_WORDS) {
    throw invalid(`q has ${words.length} words; a search may have at most ${MAX_QUERY_WORDS}`, 'invalid_query');
  }
  return words;
}
