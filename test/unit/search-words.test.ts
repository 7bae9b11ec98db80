import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { objectSearchWords, searchWords } from '../../internal/domain/search.js';
import type { Data, TrackedObject } from '../../internal/domain/types.js';
import { searchColumns } from '../../internal/store/sqlite/search-index.js';

// The oracle: the definition of a word written as plainly as possible, by regular
// expressions over the whole text (searchWords scans ASCII by hand for speed).
const RAW_WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;
const MARKS = /\p{M}/gu;
const WORD = /[\p{L}\p{N}]+/gu;

function referenceWords(text: string): string[] {
  const out: string[] = [];
  for (const [raw] of text.matchAll(RAW_WORD)) {
    const normal = raw.normalize('NFKD').replace(MARKS, '').toLowerCase().normalize('NFKD').replace(MARKS, '');
    for (const [word] of normal.replace(/ς/g, 'σ').matchAll(WORD)) out.push(word);
  }
  return out;
}

function referenceObjectWords(obj: TrackedObject): string[] {
  const words = [...referenceWords(obj.id), ...(obj.label === null ? [] : referenceWords(obj.label))];
  for (const value of Object.values(obj.data)) {
    if (typeof value === 'string') words.push(...referenceWords(value));
    else if (typeof value === 'number') words.push(...referenceWords(JSON.stringify(value)));
  }
  return words;
}

/** Characters where a fast path could go wrong, weighted towards ASCII next to non-ASCII. */
const tricky = fc.constantFrom(
  ...'aZz09AM _-./,\'!~\t\n\u007f\u0080\u00a0',
  ...'üÜéÉøØßẞıİŁłÅﬁǅΣσςＡａ１²½⅓ⅷ①',
  '\u0301', // combining acute: belongs to the word before it
  '\u20dd', // enclosing circle mark
  '\u0308',
  '\u093f', // Devanagari vowel sign (a spacing mark)
  ...'दि東京ｶﾞカナМосква١٢—–…·',
  '🚚',
  '𝐀', // mathematical bold A: a letter outside the BMP
  '𝟙', // mathematical double-struck 1: a digit outside the BMP
  '\ud800', // lone high surrogate
  '\udc00', // lone low surrogate
  '\ud835', // high surrogate of 𝐀, alone
);
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const text = fc.string({
  maxLength: 24,
  unit: fc.oneof(
    { arbitrary: tricky, weight: 6 },
    { arbitrary: fc.constantFrom(...'abcXYZ019'), weight: 4 },
    { arbitrary: codeUnit, weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 },
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), weight: 1 },
  ),
});

describe('searchWords against the regular-expression oracle', () => {
  it('gives exactly the oracle words on mixed ASCII and Unicode text', () => {
    fc.assert(
      fc.property(text, (t) => {
        assert.deepEqual(searchWords(t), referenceWords(t));
      }),
      { numRuns: 20000 },
    );
  });

  it('gives exactly the oracle words on arbitrary code units and printable text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: codeUnit }), fc.string({ unit: 'grapheme' }), fc.string()), (t) => {
        assert.deepEqual(searchWords(t), referenceWords(t));
      }),
      { numRuns: 5000 },
    );
  });

  it('appends to the array it is given', () => {
    const out = ['kept'];
    assert.equal(searchWords('Jürgen Müllerberg, truck/12', out), out);
    assert.deepEqual(out, ['kept', 'jurgen', 'mullerberg', 'truck', '12']);
  });

  it('handles the boundaries between ASCII and non-ASCII', () => {
    assert.deepEqual(searchWords('abc—def'), ['abc', 'def']);
    assert.deepEqual(searchWords('Zoë9x'), ['zoe9x']);
    assert.deepEqual(searchWords('a\u0301'), ['a']);
    assert.deepEqual(searchWords(' \u0301b'), ['b']);
    assert.deepEqual(searchWords('x½y'), ['x1', '2y']);
    assert.deepEqual(searchWords('a🚚b𝐀c\ud800d\udc00'), ['a', 'bac', 'd']);
    assert.deepEqual(searchWords('ΟΔΟΣ-οδος'), ['οδοσ', 'οδοσ']);
  });
});

describe('objectSearchWords and searchColumns against the oracle', () => {
  const value = fc.oneof(text, fc.double(), fc.integer(), fc.boolean());
  const obj = fc.record({
    id: text,
    label: fc.option(text),
    data: fc.dictionary(fc.string({ maxLength: 4 }), value, { maxKeys: 5 }),
  });
  const tracked = (o: { id: string; label: string | null; data: Data }): TrackedObject => ({ ...o, location: null, seen: null });
  const prefixed = (key: number, words: string[]) => words.map((w) => `${key}x${w}`).join(' ');

  it('finds the oracle words of id, label and data values', () => {
    fc.assert(
      fc.property(obj, (o) => {
        assert.deepEqual(objectSearchWords(tracked(o)), referenceObjectWords(tracked(o)));
      }),
      { numRuns: 3000 },
    );
  });

  it('indexes the oracle words, prefixed by the realm key', () => {
    fc.assert(
      fc.property(fc.nat(1000), obj, (key, o) => {
        const valuesOnly = tracked({ id: '', label: null, data: o.data });
        const names = referenceWords(o.id).concat(o.label === null ? [] : referenceWords(o.label));
        // Twice: the second time from the cache of value words.
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(searchColumns(key, tracked(o)), [prefixed(key, names), prefixed(key, referenceObjectWords(valuesOnly))]);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
