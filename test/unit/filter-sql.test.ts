/**
 * The SQL that compileFilter emits must decide exactly as matchesFilter does. Objects are
 * written through the SQLite store (so their data text is what the store writes) and
 * listed with every condition built from the fields, operators and values below; each
 * answer must equal matchesFilter over the stored objects. The values sit on the edges
 * that SQLite's JSON functions blur: true/false extract as 1/0, a string may look like a
 * number or like JSON, CAST turns text into numbers, integers beyond 2^53 compare as the
 * doubles JSON.parse gives, keys hold quotes, backslashes and dots.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compareCodePoints, matchesFilter } from '../../internal/domain/filter.js';
import type { Data, FilterCondition, FilterOp, ObjectPatch, ScalarValue, TrackedObject } from '../../internal/domain/types.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const NOW = '2024-05-01T12:00:00.000Z';
const REALM = 'filters';
const store = openSqliteStore(':memory:');
after(async () => {
  await store.close();
});

/** 2^60 + 256: JSON.stringify writes 1152921504606847200, which SQLite reads as that exact integer. */
const BIG = 2 ** 60 + 256;

/**
 * Nested values (objects and arrays): equal to no filter value and ordered against none,
 * also where their JSON text is a string a filter may hold ('[1]', '{}', '[]').
 */
const NESTED: readonly Data[string][] = [[1], {}, [], { a: 1 }, ['van'], [90], { s: 'van' }, [null], [[1]], [true], { '': '' }];

const VALUES: readonly Data[string][] = [
  1, '1', true, 'true', false, 0, '0', '', '[1]', '{}', '[]', '{"a":1}', 'null', 90, '90', '90abc', -0.5, 0.01, 1e21, BIG, 2 ** 53, 2 ** 53 + 2,
  'a', 'A', 'van', 'a\u0000b', '\uFFFF', '😀', 'x"y', 'a\\b', ...NESTED,
];

const KEYS = ['s', 'x"y', 'a\\b', 'a.b', '$'];

/** One object per value under key `s`, one without data, and a few under the other keys. */
function patches(): ObjectPatch[] {
  return [
    { id: 'empty', data: {} },
    ...VALUES.map((value, i): ObjectPatch => ({ id: `v${String(i).padStart(2, '0')}`, data: { s: value } })),
    { id: 'keys-1', data: { 'x"y': 'van', 'a\\b': 1, 'a.b': true, $: '' } },
    { id: 'keys-2', data: { 'x"y': 1, 'a\\b': 'van', 'a.b': 'van', $: 0 } },
    { id: 'keys-4', data: { 'x"y': ['van'], 'a\\b': { x: 1 }, 'a.b': [true], $: [] } },
    // Keys a and b beside the key `a.b` of the others: that key is not the path a → b.
    { id: 'keys-3', data: { a: 'b', b: 'van' } },
  ];
}

const FILTER_VALUES: readonly ScalarValue[] = [...VALUES.filter((v): v is string | number | boolean => typeof v !== 'object'), null, BIG - 256, BIG + 256, -1, 0.5, 91, 'b', 'vam'];
const OPS: readonly FilterOp[] = ['=', '!=', '>', '<', '>=', '<='];

async function ids(filter: FilterCondition[]): Promise<string[]> {
  return (await store.objects.list(REALM, { limit: 10_000, filter })).items.map((o) => o.id);
}

function expected(objects: readonly TrackedObject[], filter: FilterCondition[]): string[] {
  return objects
    .filter((o) => matchesFilter(o, filter))
    .map((o) => o.id)
    .sort(compareCodePoints);
}

void describe('compileFilter: SQL that decides as matchesFilter does', () => {
  let objects: TrackedObject[] = [];
  before(async () => {
    await store.objects.upsertMany(REALM, patches(), NOW);
    // An update that removes a key (null) and one that keeps the data text as stored.
    await store.objects.upsertMany(REALM, [{ id: 'keys-3', data: { b: null } }, { id: 'keys-2', label: 'relabelled' }], NOW);
    objects = (await store.objects.list(REALM, { limit: 10_000 })).items;
  });

  void it('every field, operator and value: the ids matchesFilter selects', async () => {
    for (const field of [...KEYS, 'missing']) {
      for (const op of OPS) {
        for (const value of FILTER_VALUES) {
          const filter = [{ field, op, value }];
          assert.deepEqual(await ids(filter), expected(objects, filter), `${field} ${op} ${JSON.stringify(value)}`);
        }
      }
    }
  });

  void it('id and label with every operator, >= and <= inclusive: the ids matchesFilter selects', async () => {
    for (const field of ['id', 'label']) {
      for (const op of OPS) {
        for (const value of ['v05', 'v10', 'keys-2', 'relabelled', 'a', 5, null]) {
          const filter = [{ field, op, value }];
          assert.deepEqual(await ids(filter), expected(objects, filter), `${field} ${op} ${JSON.stringify(value)}`);
        }
      }
    }
    assert.deepEqual(await ids([{ field: 'id', op: '>=', value: 'v26' }, { field: 'id', op: '<=', value: 'v27' }]), ['v26', 'v27']);
  });

  void it('two conditions on one key and on two keys', async () => {
    const pairs: FilterCondition[][] = [
      [
        { field: 's', op: '>', value: 0 },
        { field: 's', op: '<', value: 2 },
      ],
      [
        { field: 's', op: '!=', value: 1 },
        { field: 's', op: '!=', value: '1' },
      ],
      [
        { field: 'x"y', op: '=', value: 'van' },
        { field: 'a.b', op: '=', value: true },
      ],
    ];
    for (const filter of pairs) assert.deepEqual(await ids(filter), expected(objects, filter), JSON.stringify(filter));
  });

  void it('keeps types apart: the string "1", the number 1 and true', async () => {
    const found = async (value: ScalarValue): Promise<(Data | undefined)[]> =>
      (await ids([{ field: 's', op: '=', value }])).map((id) => objects.find((o) => o.id === id)?.data);
    assert.deepEqual(await found(1), [{ s: 1 }]);
    assert.deepEqual(await found('1'), [{ s: '1' }]);
    assert.deepEqual(await found(true), [{ s: true }]);
    assert.deepEqual(await found(0), [{ s: 0 }]);
    assert.deepEqual(await found('[1]'), [{ s: '[1]' }]);
    assert.deepEqual(await found('null'), [{ s: 'null' }]);
  });

  void it('`>` and `<` never cross types: no string is > a number, no number or boolean < a string', async () => {
    const types = async (op: FilterOp, value: ScalarValue): Promise<string[]> => {
      const found = await ids([{ field: 's', op, value }]);
      return [...new Set(found.map((id) => typeof objects.find((o) => o.id === id)?.data.s))].sort();
    };
    assert.deepEqual(await types('>', -1), ['number']);
    assert.deepEqual(await types('<', 2), ['number']);
    assert.deepEqual(await types('<', 'b'), ['string']);
    assert.deepEqual(await types('>', ''), ['string']);
  });

  void it('a nested value is never equal or ordered: `=` and the orders are false, `!=` and `!=null` true', async () => {
    const nestedIds = objects.filter((o) => typeof o.data.s === 'object').map((o) => o.id);
    assert.equal(nestedIds.length, NESTED.length);
    for (const value of FILTER_VALUES) {
      for (const op of OPS) {
        const found = new Set(await ids([{ field: 's', op, value }]));
        const holds = op === '!=';
        for (const id of nestedIds) assert.equal(found.has(id), holds, `${id} s ${op} ${JSON.stringify(value)}`);
      }
    }
    assert.deepEqual(
      (await ids([{ field: 's', op: '=', value: '[1]' }])).map((id) => objects.find((o) => o.id === id)?.data.s),
      ['[1]'],
      'the string "[1]" only, not the array [1]',
    );
  });

  void it('`!=` matches a missing key; `=null` a missing key, `!=null` a present one', async () => {
    const all = objects.map((o) => o.id);
    const withS = objects.filter((o) => Object.hasOwn(o.data, 's')).map((o) => o.id);
    const withoutS = all.filter((id) => !withS.includes(id));
    assert.deepEqual(await ids([{ field: 's', op: '!=', value: 'x' }]), all);
    assert.deepEqual(await ids([{ field: 's', op: '=', value: null }]), withoutS);
    assert.deepEqual(await ids([{ field: 's', op: '!=', value: null }]), withS);
    assert.deepEqual(await ids([{ field: 'b', op: '=', value: null }]), all, 'b was removed from keys-3');
  });

  void it('compares integers beyond 2^53 as the doubles JSON.parse gives', async () => {
    // JSON.parse('1152921504606847200') is 2^60 + 256; the exact integer is 32 less.
    assert.equal(JSON.parse(JSON.stringify(BIG)), BIG);
    const big = (op: FilterOp, value: number): Promise<string[]> => ids([{ field: 's', op, value }]);
    const [id] = await big('=', BIG);
    assert.ok(id !== undefined);
    assert.ok(!(await big('<', BIG)).includes(id));
    assert.ok(!(await big('>', BIG)).includes(id));
  });
});
