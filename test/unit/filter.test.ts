import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LocusError } from '../../internal/errors.js';
import { compareCodePoints, matchesFilter, parseFilter } from '../../internal/domain/filter.js';
import type { Data, TrackedObject } from '../../internal/domain/types.js';

const MAX = 100;

function rejects(text: string, message: RegExp, max = MAX): LocusError {
  let caught: unknown;
  try {
    parseFilter(text, max);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof LocusError, `expected a LocusError for ${JSON.stringify(text)}, got ${String(caught)}`);
  assert.equal(caught.code, 'invalid_filter');
  assert.equal(caught.status, 400);
  assert.match(caught.message, message);
  assert.ok(caught.message.length < 400, `message too long: ${caught.message.length}`);
  return caught;
}

function object(data: Data, label: string | null = null, id = 'obj-1'): TrackedObject {
  return { id, label, location: null, data, seen: null };
}

const matches = (obj: TrackedObject, filter: string): boolean => matchesFilter(obj, parseFilter(filter, MAX));

describe('parseFilter: grammar', () => {
  it('reads an empty filter as no conditions', () => {
    assert.deepEqual(parseFilter('', MAX), []);
  });

  it('reads each operator', () => {
    assert.deepEqual(parseFilter('a=1', MAX), [{ field: 'a', op: '=', value: 1 }]);
    assert.deepEqual(parseFilter('a!=1', MAX), [{ field: 'a', op: '!=', value: 1 }]);
    assert.deepEqual(parseFilter('a>1', MAX), [{ field: 'a', op: '>', value: 1 }]);
    assert.deepEqual(parseFilter('a<1', MAX), [{ field: 'a', op: '<', value: 1 }]);
    assert.deepEqual(parseFilter('a>=1', MAX), [{ field: 'a', op: '>=', value: 1 }]);
    assert.deepEqual(parseFilter('a<=1', MAX), [{ field: 'a', op: '<=', value: 1 }]);
    assert.deepEqual(parseFilter('fuel>=0.5', MAX), [{ field: 'fuel', op: '>=', value: 0.5 }]);
  });

  it('takes the first operator from the left, a two-character one (!=, >=, <=) before = > < at the same position', () => {
    assert.deepEqual(parseFilter('a>=5', MAX), [{ field: 'a', op: '>=', value: 5 }]);
    assert.deepEqual(parseFilter('a<=5', MAX), [{ field: 'a', op: '<=', value: 5 }]);
    assert.deepEqual(parseFilter('a>=x', MAX), [{ field: 'a', op: '>=', value: 'x' }]);
    assert.deepEqual(parseFilter('a!!=5', MAX), [{ field: 'a!', op: '!=', value: 5 }]);
    // A ! not followed by = is part of the field name.
    assert.deepEqual(parseFilter('a!b=5', MAX), [{ field: 'a!b', op: '=', value: 5 }]);
    assert.deepEqual(parseFilter('a=b=c', MAX), [{ field: 'a', op: '=', value: 'b=c' }]);
  });

  it('rejects a bare value that begins with an operator character; quoted, it is a value', () => {
    for (const text of ['a==5', 'a=!=5', 'a>==5', 'a<>5', 'a=<5', 'a=>5', 'a=!x']) {
      assert.throws(
        () => parseFilter(text, MAX),
        (err: unknown) =>
          err instanceof LocusError && err.code === 'invalid_filter' && /begins with an operator character .*write it as the quoted string "/.test(err.message),
        text,
      );
    }
    assert.deepEqual(parseFilter('a="=5"', MAX), [{ field: 'a', op: '=', value: '=5' }]);
    assert.deepEqual(parseFilter('a>"=5"', MAX), [{ field: 'a', op: '>', value: '=5' }]);
    assert.deepEqual(parseFilter('a!="!=5"', MAX), [{ field: 'a', op: '!=', value: '!=5' }]);
    // Operator characters later in a bare value are part of it.
    assert.deepEqual(parseFilter('a=b=c', MAX), [{ field: 'a', op: '=', value: 'b=c' }]);
  });

  it('splits conditions on commas', () => {
    assert.deepEqual(parseFilter('a=1,b!=x,c>2', MAX), [
      { field: 'a', op: '=', value: 1 },
      { field: 'b', op: '!=', value: 'x' },
      { field: 'c', op: '>', value: 2 },
    ]);
  });

  it('types true, false and null, case-sensitively', () => {
    assert.deepEqual(
      parseFilter('a=true,b=false,c=null,d=True,e=NULL,f=FALSE', MAX).map((c) => c.value),
      [true, false, null, 'True', 'NULL', 'FALSE'],
    );
  });

  it('reads JSON numbers and only JSON numbers as numbers', () => {
    const values = (text: string): unknown[] => parseFilter(text, MAX).map((c) => c.value);
    assert.deepEqual(values('a=5,a=-1.5e3,a=0,a=0.25,a=1E2,a=2e-2,a=-0'), [5, -1500, 0, 0.25, 100, 0.02, 0]);
    assert.ok(Object.is(parseFilter('a=-0', MAX)[0]!.value, 0), '-0 is read as 0');
    assert.deepEqual(values('a=05,a=.5,a=+1,a=5.,a=1e,a=0x10,a=Infinity,a=NaN,a=1_000,a=- 1'), [
      '05',
      '.5',
      '+1',
      '5.',
      '1e',
      '0x10',
      'Infinity',
      'NaN',
      '1_000',
      '- 1',
    ]);
  });

  it('reads JSON strings with commas, operators, quotes and escapes', () => {
    assert.deepEqual(parseFilter('name="x,y"', MAX), [{ field: 'name', op: '=', value: 'x,y' }]);
    assert.deepEqual(parseFilter('s="a\\"b"', MAX), [{ field: 's', op: '=', value: 'a"b' }]);
    assert.deepEqual(parseFilter('s="a=b!=c<d>e",t=1', MAX), [
      { field: 's', op: '=', value: 'a=b!=c<d>e' },
      { field: 't', op: '=', value: 1 },
    ]);
    assert.deepEqual(parseFilter('s="\\u00e9\\n\\\\",t="5"', MAX), [
      { field: 's', op: '=', value: 'é\n\\' },
      { field: 't', op: '=', value: '5' },
    ]);
    assert.deepEqual(parseFilter('s=""', MAX), [{ field: 's', op: '=', value: '' }]);
    assert.deepEqual(parseFilter('s="true",t="null"', MAX).map((c) => c.value), ['true', 'null']);
    assert.deepEqual(parseFilter('s="😀,\\ud83d\\ude00"', MAX), [{ field: 's', op: '=', value: '😀,😀' }]);
  });

  it('keeps bare strings as written: case, spaces, inner quotes, empty', () => {
    assert.deepEqual(parseFilter('City=Berlin', MAX), [{ field: 'City', op: '=', value: 'Berlin' }]);
    assert.deepEqual(parseFilter('a = 5', MAX), [{ field: 'a ', op: '=', value: ' 5' }]);
    assert.deepEqual(parseFilter('a=x"y', MAX), [{ field: 'a', op: '=', value: 'x"y' }]);
    assert.deepEqual(parseFilter('a=', MAX), [{ field: 'a', op: '=', value: '' }]);
    assert.deepEqual(parseFilter('a=,b=1', MAX), [
      { field: 'a', op: '=', value: '' },
      { field: 'b', op: '=', value: 1 },
    ]);
    assert.deepEqual(parseFilter('ville=Zürich 🚲', MAX), [{ field: 'ville', op: '=', value: 'Zürich 🚲' }]);
  });

  it('allows any other character in field names', () => {
    assert.deepEqual(parseFilter('"q"=1', MAX), [{ field: '"q"', op: '=', value: 1 }]);
    assert.deepEqual(parseFilter('a b.c/d=1', MAX), [{ field: 'a b.c/d', op: '=', value: 1 }]);
    assert.deepEqual(parseFilter('id=v/17,label!=null', MAX), [
      { field: 'id', op: '=', value: 'v/17' },
      { field: 'label', op: '!=', value: null },
    ]);
  });

  it('accepts exactly maxConditions conditions', () => {
    const text = Array.from({ length: MAX }, (_, i) => `f${i}=${i}`).join(',');
    assert.equal(parseFilter(text, MAX).length, MAX);
    assert.equal(parseFilter('a=1,b=2', 2).length, 2);
  });
});

describe('parseFilter: errors name the condition', () => {
  it('rejects a trailing, a leading and a doubled comma', () => {
    rejects('a=1,', /^filter condition 2 \(""\) is empty \(the filter ends with a comma\)/);
    rejects(',a=1', /^filter condition 1 \(""\) is empty \(the filter starts with a comma\)/);
    rejects('a=1,,b=2', /^filter condition 2 \(""\) is empty;/);
    rejects(',', /condition 1 .* is empty/);
    rejects('a="x",', /condition 2 .* ends with a comma/);
  });

  it('rejects a condition without an operator', () => {
    rejects('a=1,bogus,c=3', /^filter condition 2 \("bogus"\) has no operator; a condition is <field><op><value>/);
    rejects('abc', /^filter condition 1 \("abc"\) has no operator/);
    rejects('a!b', /condition 1 \("a!b"\) has no operator/);
  });

  it('rejects a missing field name', () => {
    rejects('=5', /^filter condition 1 \("=5"\) has no field name before =/);
    rejects('a=1,!=5', /^filter condition 2 \("!=5"\) has no field name before !=/);
    rejects('a=1,b=2,>3', /^filter condition 3 \(">3"\) has no field name before >/);
  });

  it('rejects an unterminated quote, even when commas follow', () => {
    rejects('a=1,s="abc', /^filter condition 2 \("s=\\"abc"\) has an unterminated quoted string/);
    rejects('s="x,b=2', /^filter condition 1 \("s=\\"x,b=2"\) has an unterminated/);
    rejects('s="abc\\"', /condition 1 .* unterminated/);
    rejects('s="abc\\', /condition 1 .* unterminated/);
  });

  it('rejects text after a closing quote', () => {
    rejects('s="a"b', /^filter condition 1 \("s=\\"a\\"b"\) has text after the closing quote/);
    rejects('x=1,s="a" ,y=2', /^filter condition 2 \("s=\\"a\\" "\) has text after the closing quote/);
    rejects('s="a""b"', /condition 1 .* text after the closing quote/);
  });

  it('rejects invalid JSON strings', () => {
    rejects('s="\\x41"', /condition 1 .* not a valid JSON string/);
    rejects('s="\\u12"', /condition 1 .* not a valid JSON string/);
    rejects('s="a\tb"', /condition 1 .* not a valid JSON string/);
    rejects('s="\\ud800"', /condition 1 .* unpaired surrogate/);
  });

  it('rejects unpaired surrogates and numbers beyond the double range', () => {
    rejects('s=\ud800', /unpaired/);
    rejects('a=1,n=1e999', /^filter condition 2 \("n=1e999"\) has a number out of range/);
    rejects('n=-1e400', /out of range/);
  });

  it('truncates long condition text in the message', () => {
    const long = `${'x'.repeat(500)}`;
    const err = rejects(`a=1,${long}`, /^filter condition 2 \("x{64}"…\) has no operator/);
    assert.ok(err.message.length < 200);
  });

  it('rejects more than maxConditions conditions', () => {
    const text = Array.from({ length: MAX + 1 }, (_, i) => `f${i}=${i}`).join(',');
    rejects(text, /^filter has more than 100 conditions$/);
    rejects('a=1,b=2,c=3', /more than 2 conditions/, 2);
  });
});

describe('compareCodePoints', () => {
  it('orders by code point, not by UTF-16 unit', () => {
    assert.ok('\uFFFF' > '😀', 'JavaScript < compares UTF-16 units');
    assert.equal(compareCodePoints('\uFFFF', '😀'), -1);
    assert.equal(compareCodePoints('😀', '\uFFFF'), 1);
    assert.equal(compareCodePoints('\uE000', '\u{10000}'), -1);
    assert.equal(compareCodePoints('\uD7FF', '\u{10000}'), -1);
    assert.equal(compareCodePoints('😀', '😁'), -1);
    assert.equal(compareCodePoints('abc', 'abd'), -1);
    assert.equal(compareCodePoints('ab', 'abc'), -1);
    assert.equal(compareCodePoints('abc', 'ab'), 1);
    assert.equal(compareCodePoints('', ''), 0);
    assert.equal(compareCodePoints('x😀', 'x😀'), 0);
    assert.equal(compareCodePoints('B', 'a'), -1);
  });

  it('agrees with UTF-8 byte order (SQLite BINARY collation)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        assert.equal(compareCodePoints(a, b), bytes);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('matchesFilter', () => {
  const car = object({ speed: 5, name: 'Truck', code: '5', on: true, note: 'x,y' }, 'Big truck', 'vehicle/17');

  it('compares type and value with = and !=', () => {
    assert.equal(matches(car, 'speed=5'), true);
    assert.equal(matches(car, 'speed="5"'), false);
    assert.equal(matches(car, 'code="5"'), true);
    assert.equal(matches(car, 'code=5'), false);
    assert.equal(matches(car, 'code!=5'), true);
    assert.equal(matches(car, 'speed!=5'), false);
    assert.equal(matches(car, 'speed!="5"'), true);
    assert.equal(matches(car, 'on=true'), true);
    assert.equal(matches(car, 'on="true"'), false);
    assert.equal(matches(car, 'on=false'), false);
    assert.equal(matches(car, 'on!=false'), true);
    assert.equal(matches(car, 'name=Truck'), true);
    assert.equal(matches(car, 'name=truck'), false);
    assert.equal(matches(car, 'note="x,y"'), true);
    assert.equal(matches(car, 'speed=5.0'), true);
  });

  it('matches a missing field with != but not with =', () => {
    assert.equal(matches(car, 'missing!=1'), true);
    assert.equal(matches(car, 'missing!="x"'), true);
    assert.equal(matches(car, 'missing=1'), false);
    assert.equal(matches(car, 'missing=""'), false);
  });

  it('treats =null as missing or null and !=null as present', () => {
    assert.equal(matches(car, 'missing=null'), true);
    assert.equal(matches(car, 'missing!=null'), false);
    assert.equal(matches(car, 'speed=null'), false);
    assert.equal(matches(car, 'speed!=null'), true);
    assert.equal(matches(car, 'name="null"'), false);
    const unlabeled = object({}, null);
    assert.equal(matches(unlabeled, 'label=null'), true);
    assert.equal(matches(unlabeled, 'label!=null'), false);
    assert.equal(matches(unlabeled, 'label!=x'), true);
    assert.equal(matches(car, 'label=null'), false);
    assert.equal(matches(car, 'label!=null'), true);
  });

  it('reads id and label from the object, other fields from own data properties', () => {
    assert.equal(matches(car, 'id=vehicle/17'), true);
    assert.equal(matches(car, 'id="vehicle/17"'), true);
    assert.equal(matches(car, 'id=vehicle/18'), false);
    assert.equal(matches(car, 'label=Big truck'), true);
    assert.equal(matches(car, 'label>Big'), true);
    // Inherited properties are not data.
    assert.equal(matches(car, 'constructor=null'), true);
    assert.equal(matches(car, 'toString!=null'), false);
    assert.equal(matches(car, '__proto__=null'), true);
    // A data key named id does not shadow the object id.
    const odd = object({ id: 'other' }, null, 'real');
    assert.equal(matches(odd, 'id=real'), true);
    assert.equal(matches(odd, 'id=other'), false);
  });

  it('compares numbers with numbers by > and <', () => {
    assert.equal(matches(car, 'speed>4'), true);
    assert.equal(matches(car, 'speed>5'), false);
    assert.equal(matches(car, 'speed<5'), false);
    assert.equal(matches(car, 'speed<5.5'), true);
    assert.equal(matches(car, 'speed>-1e3'), true);
    assert.equal(matches(object({ t: -2 }), 't<-1.5'), true);
    // 10 > 9 as numbers although "10" < "9" as strings.
    assert.equal(matches(object({ n: 10 }), 'n>9'), true);
  });

  it('compares strings with strings by > and <, in code point order', () => {
    assert.equal(matches(car, 'name>T'), true);
    assert.equal(matches(car, 'name>Truck'), false);
    assert.equal(matches(car, 'name<Truckz'), true);
    assert.equal(matches(car, 'name<truck'), true, 'uppercase sorts first');
    assert.equal(matches(object({ s: '😀' }), 's>"\\uffff"'), true);
    assert.equal(matches(object({ s: '\uFFFF' }), 's<😀'), true);
    assert.equal(matches(object({ s: '\uFFFF' }), 's>😀'), false);
    assert.equal(matches(object({ n: '10' }), 'n>"9"'), false);
  });

  it('never compares across types, with null or on a missing field', () => {
    assert.equal(matches(car, 'speed>"1"'), false);
    assert.equal(matches(car, 'speed<"9"'), false);
    assert.equal(matches(car, 'code>1'), false);
    assert.equal(matches(car, 'code<9'), false);
    assert.equal(matches(car, 'name>1'), false);
    assert.equal(matches(car, 'on>false'), false);
    assert.equal(matches(car, 'on<true'), false);
    assert.equal(matches(car, 'speed>true'), false);
    assert.equal(matches(car, 'speed>null'), false);
    assert.equal(matches(car, 'speed<null'), false);
    assert.equal(matches(car, 'missing>0'), false);
    assert.equal(matches(car, 'missing<0'), false);
    assert.equal(matches(car, 'missing<"z"'), false);
    assert.equal(matches(object({}, null), 'label<z'), false);
    // A bare value that is not a JSON number is a string: 5 > "05" never holds.
    assert.equal(matches(car, 'speed>05'), false);
    assert.equal(matches(car, 'code>05'), true);
  });

  it('requires every condition', () => {
    assert.equal(matches(car, 'speed=5,name=Truck'), true);
    assert.equal(matches(car, 'speed=5,name=Van'), false);
    assert.equal(matches(car, 'name=Van,speed=5'), false);
    assert.equal(matches(car, ''), true);
    assert.equal(matchesFilter(car, []), true);
  });

  it('reads a>=5 and a<=5 as inclusive comparisons, of numbers with numbers and strings with strings', () => {
    assert.equal(matches(object({ a: 7 }), 'a>=5'), true);
    assert.equal(matches(object({ a: 5 }), 'a>=5'), true);
    assert.equal(matches(object({ a: 4.5 }), 'a>=5'), false);
    assert.equal(matches(object({ a: 5 }), 'a<=5'), true);
    assert.equal(matches(object({ a: 6 }), 'a<=5'), false);
    assert.equal(matches(object({ fuel: 0.5 }), 'fuel>=0.5'), true);
    assert.equal(matches(object({ a: 'b' }), 'a>=b'), true);
    assert.equal(matches(object({ a: 'a' }), 'a>=b'), false);
    assert.equal(matches(object({ a: '5' }), 'a>=5'), false, 'a string is never compared with a number');
    assert.equal(matches(object({}), 'a<=5'), false, 'a missing field');
    assert.equal(matches(object({}, null), 'label<=null'), false, 'null is not ordered');
    assert.equal(matches(object({ a: '>' }), 'a>"=5"'), true, '">" > "=5"');
  });
});
