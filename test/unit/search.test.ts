import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LocusError } from '../../internal/errors.js';
import {
  MAX_QUERY_WORDS,
  matchesSearch,
  objectSearchWords,
  parseSearchQuery,
  searchWords,
} from '../../internal/domain/search.js';
import type { Data, TrackedObject } from '../../internal/domain/types.js';

function object(id: string, label: string | null, data: Data = {}): TrackedObject {
  return { id, label, location: null, data, seen: null };
}

function rejects(q: unknown, message: RegExp | string): void {
  let caught: unknown;
  try {
    parseSearchQuery(q);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof LocusError, `expected a LocusError for ${JSON.stringify(q)}`);
  assert.equal(caught.code, 'invalid_query');
  assert.equal(caught.status, 400);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else assert.match(caught.message, message);
}

const finds = (obj: TrackedObject, q: string): boolean => matchesSearch(obj, parseSearchQuery(q));

describe('searchWords', () => {
  it('splits on everything but letters and digits', () => {
    assert.deepEqual(searchWords('Hello, World!'), ['hello', 'world']);
    assert.deepEqual(searchWords('vehicle/17'), ['vehicle', '17']);
    assert.deepEqual(searchWords('a_b-c.d e\tf\ng'), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    assert.deepEqual(searchWords("O'Brien's car"), ['o', 'brien', 's', 'car']);
    assert.deepEqual(searchWords('route66x'), ['route66x']);
    assert.deepEqual(searchWords('12.5'), ['12', '5']);
    assert.deepEqual(searchWords('  ...!?  '), []);
    assert.deepEqual(searchWords(''), []);
    assert.deepEqual(searchWords('🚚 truck 🚚'), ['truck']);
  });

  it('lower-cases, locale-independently', () => {
    assert.deepEqual(searchWords('TRACTOR Tractor tRaCtOr'), ['tractor', 'tractor', 'tractor']);
    assert.deepEqual(searchWords('ISTANBUL İstanbul'), ['istanbul', 'istanbul']);
    assert.deepEqual(searchWords('ΣΟΦΟΣ σοφος'), ['σοφοσ', 'σοφοσ'], 'final sigma folds to σ');
  });

  it('drops accents and other combining marks', () => {
    assert.deepEqual(searchWords('Müller Mueller Muller'), ['muller', 'mueller', 'muller']);
    assert.deepEqual(searchWords('Crème Brûlée'), ['creme', 'brulee']);
    // Decomposed input (e + U+0301) is the same word as the composed one.
    assert.deepEqual(searchWords('Cafe\u0301 Café'), ['cafe', 'cafe']);
    assert.deepEqual(searchWords('Ångström Łódź'), ['angstrom', 'łodz']);
    // A mark inside a word does not split it.
    assert.deepEqual(searchWords('a\u0301b\u20DDc'), ['abc']);
  });

  it('applies compatibility decomposition', () => {
    assert.deepEqual(searchWords('ﬁnance'), ['finance']);
    assert.deepEqual(searchWords('ＦＵＬＬ１２'), ['full12']);
    assert.deepEqual(searchWords('x² ½'), ['x2', '1', '2']);
    assert.deepEqual(searchWords('ｶﾀｶﾅ'), ['カタカナ']);
  });

  it('keeps CJK, Cyrillic, Arabic and Devanagari letters', () => {
    assert.deepEqual(searchWords('東京タワー'), ['東京タワー']);
    assert.deepEqual(searchWords('北京 上海'), ['北京', '上海']);
    assert.deepEqual(searchWords('Москва Санкт-Петербург'), ['москва', 'санкт', 'петербург']);
    assert.deepEqual(searchWords('دبي ١٢'), ['دبي', '١٢']);
    // Devanagari vowel signs are marks: dropped, the letters stay one word.
    assert.deepEqual(searchWords('दिल्ली'), ['दलल']);
  });

  it('is idempotent: every word is its own only word', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (text) => {
        for (const word of searchWords(text)) {
          assert.match(word, /^[\p{L}\p{N}]+$/u);
          assert.deepEqual(searchWords(word), [word]);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('objectSearchWords', () => {
  it('takes the id, label and string and number data values, not keys or booleans', () => {
    const obj = object('vehicle/17', 'Big Tractor', {
      driver: 'Anna Müller',
      load: 12.5,
      big: 1e21,
      active: true,
      secretKey: 'Zebra',
    });
    assert.deepEqual(objectSearchWords(obj), [
      'vehicle',
      '17',
      'big',
      'tractor',
      'anna',
      'muller',
      '12',
      '5',
      '1e',
      '21',
      'zebra',
    ]);
    assert.ok(!objectSearchWords(obj).includes('driver'));
    assert.ok(!objectSearchWords(obj).includes('true'));
    assert.deepEqual(objectSearchWords(object('x', null)), ['x']);
  });
});

describe('objectSearchWords of nested data values', () => {
  it('takes the string leaves at any depth, in document order; not keys, numbers, booleans or nulls inside', () => {
    const data = JSON.parse('{"icon":{"color":"Crimson","size":12,"tags":["Zürich",true,null,[["deep"]]]},"n":3}') as TrackedObject['data'];
    assert.deepEqual(objectSearchWords(object('o', null, data)), ['o', 'crimson', 'zurich', 'deep', '3']);
  });
});

describe('matchesSearch and parseSearchQuery', () => {
  const tractor = object('vehicle/17', 'Big Tractor', { driver: 'Anna Müller', load: 12.5, active: true, city: '東京' });

  it('matches word prefixes, case- and accent-insensitively', () => {
    assert.equal(finds(tractor, 'trac'), true);
    assert.equal(finds(tractor, 'TRACTOR'), true);
    assert.equal(finds(tractor, 'tractors'), false);
    assert.equal(finds(tractor, 'ractor'), false, 'only prefixes, not infixes');
    assert.equal(finds(tractor, 'mul'), true);
    assert.equal(finds(tractor, 'Mül'), true);
    assert.equal(finds(tractor, 'MÜLLER'), true);
    assert.equal(finds(tractor, 'mue'), false);
  });

  it('requires every query word, in any order', () => {
    assert.equal(finds(tractor, 'big trac'), true);
    assert.equal(finds(tractor, 'trac big'), true);
    assert.equal(finds(tractor, 'big truck'), false);
    assert.equal(finds(tractor, 'anna, müller!'), true);
  });

  it('searches the id, numbers in data and CJK', () => {
    assert.equal(finds(tractor, 'vehicle'), true);
    assert.equal(finds(tractor, 'veh 17'), true);
    assert.equal(finds(tractor, '12'), true);
    assert.equal(finds(tractor, '12.5'), true);
    assert.equal(finds(tractor, '5'), true);
    assert.equal(finds(tractor, '125'), false);
    assert.equal(finds(tractor, '東'), true);
    assert.equal(finds(tractor, '東京'), true);
    assert.equal(finds(tractor, '京'), false);
    assert.equal(finds(tractor, 'true'), false, 'booleans are not searched');
    assert.equal(finds(tractor, 'driver'), false, 'keys are not searched');
  });

  it('finds nothing in an object without matching words', () => {
    assert.equal(finds(object('a', null), 'b'), false);
    assert.equal(finds(object('abc', null), 'abc'), true);
  });

  it('returns the distinct query words', () => {
    assert.deepEqual(parseSearchQuery('Big  big, TRAC'), ['big', 'trac']);
    assert.deepEqual(parseSearchQuery('—Zürich—'), ['zurich']);
  });

  it('rejects an empty or wordless q', () => {
    rejects('', 'q must contain at least one letter or digit');
    rejects('   ', 'q must contain at least one letter or digit');
    rejects('...,!?-', 'q must contain at least one letter or digit');
    rejects('🚚', 'q must contain at least one letter or digit');
    rejects('\u0301', 'q must contain at least one letter or digit');
  });

  it('rejects a q that is not one string', () => {
    rejects(undefined, /q is required/);
    rejects(['a', 'b'], 'q must be a single string');
    rejects(5, 'q must be a single string');
  });

  it('allows at most 32 words', () => {
    const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    assert.equal(MAX_QUERY_WORDS, 32);
    assert.equal(parseSearchQuery(words(32)).length, 32);
    rejects(words(33), /^q has 33 words; a search may have at most 32$/);
    // Repeats count once.
    assert.equal(parseSearchQuery(`${words(32)} w0 w1`).length, 32);
  });
});
