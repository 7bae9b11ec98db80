import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findMatch, keepBest, matchEntity, matchTerm, rankRecords, scoreOf, type MatchField, type Searchable } from '../../internal/domain/match-records.js';

const all = new Set<MatchField>(['id', 'label', 'data']);
const at = (value: string, text: string): [number, number] | null => findMatch(value, matchTerm(text));

void describe('match records (hivekit-compat 7.2)', () => {
  void it('matches case-insensitively at the start of a word; offsets are UTF-16 indexes of the original, end exclusive', () => {
    assert.deepEqual(at('city scooter', 'scooter'), [5, 12]);
    assert.deepEqual(at('city scooter', 'SCOOTER'), [5, 12]);
    assert.deepEqual(at('object-a-x1', 'Object'), [0, 6]);
    assert.deepEqual(at('Object A Label', 'object a'), [0, 8]);
    assert.equal(at('city scooter', 'cooter'), null);
    assert.equal(at('does not exist', 'does-not-exist'), null);
    // The first occurrence gives the record.
    assert.deepEqual(at('van van', 'van'), [0, 3]);
    // A text that begins with a separator may match anywhere.
    assert.deepEqual(at('does-not-exist', '-not'), [4, 8]);
  });

  void it('counts code units as JavaScript does, around astral characters and non-ASCII case', () => {
    assert.deepEqual(at('🚚 Ümit', 'ümit'), [3, 7]);
    assert.deepEqual(at('ÄRGER', 'ärg'), [0, 3]);
    assert.deepEqual(at('x🚚y 😀Zoë', 'zoë'), [7, 10]);
    // Accents must match; a letter before the match is not a word start.
    assert.equal(at('Zoe', 'zoë'), null);
    assert.equal(at('aÖl', 'öl'), null);
    assert.deepEqual(at('𝐀𝐁 ab', 'ab'), [5, 7]);
  });

  void it('records of one entity: id, label, string data values only, with the property for data', () => {
    const records = matchEntity({ id: 'van-7', label: 'Van seven', data: { kind: 'van', n: 7, note: 'a minivan' } }, 'object', matchTerm('van'), all);
    assert.deepEqual(
      records.map((r) => [r.field, r.value, r.start, r.end, r.property]),
      [
        ['id', 'van-7', 0, 3, undefined],
        ['label', 'Van seven', 0, 3, undefined],
        ['data', 'van', 0, 3, 'kind'],
      ],
    );
    assert.equal(records[0]?.property, undefined);
    assert.ok(!('property' in (records[0] ?? {})));
    assert.deepEqual(matchEntity({ id: 'x', label: null, data: { a: 'van' } }, 'area', matchTerm('van'), new Set<MatchField>(['label'])), []);
  });

  void it('nested data values: the first matching string leaf (document order) makes one record, named by the top-level key', () => {
    const data = JSON.parse('{"$hkt_icon":{"category":"van","filename":"van.png","n":7},"stops":[["x"],{"name":"Vanløse"}],"k":{"van":1}}') as Searchable['data'];
    const records = matchEntity({ id: 'x', label: null, data }, 'object', matchTerm('van'), all);
    assert.deepEqual(
      records.map((r) => [r.field, r.value, r.start, r.end, r.property]),
      [
        ['data', 'van', 0, 3, '$hkt_icon'],
        ['data', 'Vanløse', 0, 3, 'stops'],
      ],
    );
    assert.deepEqual(matchEntity({ id: 'x', label: null, data }, 'object', matchTerm('7'), all), []);
  });

  void it('scores: id and label over data, whole values over parts; ranks and caps by entity', () => {
    assert.ok(scoreOf('label', 'van', 0, 3) > scoreOf('data', 'van', 0, 3));
    assert.ok(scoreOf('data', 'van', 0, 3) > scoreOf('data', 'van seven', 0, 3));
    const term = matchTerm('van');
    const a = matchEntity({ id: 'a', label: 'a van in town', data: {} }, 'object', term, all);
    const b = matchEntity({ id: 'b', label: 'Van', data: { kind: 'van' } }, 'object', term, all);
    const kept = keepBest([a, b], 1);
    assert.deepEqual(kept.flat().map((r) => r.id), ['b', 'b']);
    const ranked = rankRecords([...a, ...b]);
    assert.deepEqual(ranked.map((r) => [r.id, r.field]), [['b', 'label'], ['a', 'label'], ['b', 'data']]);
    assert.deepEqual(keepBest([a, b], 0), []);
  });
});
