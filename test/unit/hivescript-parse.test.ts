/**
 * HiveScript's parser and checker (internal/instructions/language): the accepted forms give
 * exactly the Program expected, the refused ones exactly the message expected, and two
 * properties: printing a random Program and compiling the text gives it back, and no text
 * makes compileInstruction throw anything but an InstructionSyntaxError pointing into it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LocusError } from '../../internal/errors.js';
import type { Action, Condition, Period, PeriodUnit, Program, ValueExpr, WhenSet } from '../../internal/instructions/language/ast.js';
import { compileInstruction, parseInstruction } from '../../internal/instructions/language/compile.js';
import { InstructionSyntaxError } from '../../internal/instructions/language/syntax-error.js';

const lit = (value: string | number | boolean | null, quoted = false): ValueExpr => ({ kind: 'literal', value, quoted });
const cond = (field: string, op: Condition['op'], value: ValueExpr): Condition => ({ field, op, value });
const set = (name: string, value: string | number | boolean | null): Action => ({ kind: 'set', name, value });
const objects = (...filter: Condition[]): WhenSet => ({ kind: 'objects', filter });
const program = (when: WhenSet, then: Action[][], until: Action[][] = [], every: Period | null = null): Program => ({ every, when, then, until });

/** The refusal of `source`, checked to be an InstructionSyntaxError (a LocusError invalid_instruction, 400). */
function refusal(source: string): InstructionSyntaxError {
  let caught: unknown;
  try {
    compileInstruction(source);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof InstructionSyntaxError, `expected a refusal of ${JSON.stringify(source)}, got ${String(caught)}`);
  assert.ok(caught instanceof LocusError);
  assert.equal(caught.code, 'invalid_instruction');
  assert.equal(caught.status, 400);
  return caught;
}

// The sources of Hivekit's client tests (hivekit/client-js test/instruction-test.js), as sent.
const CLIENT_A = `
            when
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")
        `;
const CLIENT_B = `
        every 10 min
        when
            object(type="scooter", charge<0.7318)
        then
            set("needsCharging", "true")
        until
            set("needsCharging", "false")
    `;
const CLIENT_C = `
        every 10 min
        when
            object(type="scooter", charge<0.25)
            then
            set("needsCharging", "true")
        until
            set("needsCharging", "false")
    `;
const CLIENT_UPDATE = `
            every 10 min
            when
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")`;
const CLIENT_SYNTAX_ERROR = `
            when blablub
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")
        `;

const scooters = (below: number): WhenSet => objects(cond('type', '=', lit('scooter', true)), cond('charge', '<', lit(below)));
const charging = [[set('needsCharging', 'true')]];
const charged = [[set('needsCharging', 'false')]];

describe('HiveScript: accepted forms', () => {
  it("accepts the client tests' sources, with their leading and trailing whitespace and newlines", () => {
    assert.deepEqual(compileInstruction(CLIENT_A), program(scooters(0.2), charging, charged));
    const tenMinutes = (line: number, column: number, offset: number): Period => ({ amount: 10, unit: 'minute', ms: 600_000, at: { line, column, offset } });
    assert.deepEqual(compileInstruction(CLIENT_B), program(scooters(0.7318), charging, charged, tenMinutes(2, 15, 15)));
    assert.deepEqual(compileInstruction(CLIENT_C), program(scooters(0.25), charging, charged, tenMinutes(2, 15, 15)));
    assert.deepEqual(compileInstruction(CLIENT_UPDATE), program(scooters(0.2), charging, charged, tenMinutes(2, 19, 19)));
  });

  it("accepts the tutorial's area instruction: bare words, $-keys and \\# for #", () => {
    const source = 'when\n    area().containing(type=scooter)\nthen\n    set($hkt_color, \\#62ec46)\nuntil\n    set($hkt_color, \\#c546ec)';
    assert.deepEqual(
      compileInstruction(source),
      program({ kind: 'areasContaining', filter: [], objects: [cond('type', '=', lit('scooter'))] }, [[set('$hkt_color', '#62ec46')]], [[set('$hkt_color', '#c546ec')]]),
    );
  });

  it('accepts the introduction, object, within and sendToUrl examples of the documentation', () => {
    assert.deepEqual(
      compileInstruction('when\n  object(troublemaker="true")\nthen\n  delete()'),
      program(objects(cond('troublemaker', '=', lit('true', true))), [[{ kind: 'delete' }]]),
    );
    assert.deepEqual(
      compileInstruction('when object(value < 100000, type = "airplane", capacity > 10) then delete()'),
      program(objects(cond('value', '<', lit(100000)), cond('type', '=', lit('airplane', true)), cond('capacity', '>', lit(10))), [[{ kind: 'delete' }]]),
    );
    assert.deepEqual(
      compileInstruction('when object(type="sensor", value < object(type="dial").get("value")) then delete()'),
      program(
        objects(cond('type', '=', lit('sensor', true)), cond('value', '<', { kind: 'aggregate', of: [cond('type', '=', lit('dial', true))], field: 'value' })),
        [[{ kind: 'delete' }]],
      ),
    );
    assert.deepEqual(
      compileInstruction('when object(type="truck", depot = object(type="depot").get("name"), $label != "spare") then delete()').when,
      objects(
        cond('type', '=', lit('truck', true)),
        cond('depot', '=', { kind: 'aggregate', of: [cond('type', '=', lit('depot', true))], field: 'name' }),
        cond('$label', '!=', lit('spare', true)),
      ),
    );
    assert.deepEqual(
      compileInstruction('when object(type="vehicle").within(100, type="bridge", minClearance<this().get("maxClearance"))\nthen sendToUrl("http://localhost:8080/batball")'),
      program(
        {
          kind: 'pairs',
          filter: [cond('type', '=', lit('vehicle', true))],
          radius: 100,
          partner: [cond('type', '=', lit('bridge', true)), cond('minClearance', '<', { kind: 'this', field: 'maxClearance' })],
        },
        [[{ kind: 'sendToUrl', url: 'http://localhost:8080/batball' }]],
      ),
    );
    assert.deepEqual(
      compileInstruction('when object(type=vru).within(10, type=fleet) then sendToUrl(http://127.0.0.1:3000/process-near-pass)'),
      program(
        { kind: 'pairs', filter: [cond('type', '=', lit('vru'))], radius: 10, partner: [cond('type', '=', lit('fleet'))] },
        [[{ kind: 'sendToUrl', url: 'http://127.0.0.1:3000/process-near-pass' }]],
      ),
    );
    assert.deepEqual(
      compileInstruction('when object(type="ball").within(0.5, type="bat") then sendToUrl("http://localhost:8080/batball")').when,
      { kind: 'pairs', filter: [cond('type', '=', lit('ball', true))], radius: 0.5, partner: [cond('type', '=', lit('bat', true))] },
    );
  });

  it('accepts objects inside areas (the locus extension), and areas alone', () => {
    assert.deepEqual(compileInstruction('when object(type=van).inside(type=depot) then set(status, arrived)'), {
      every: null,
      when: { kind: 'objectsInside', filter: [cond('type', '=', lit('van'))], areas: [cond('type', '=', lit('depot'))] },
      then: [[set('status', 'arrived')]],
      until: [],
    });
    assert.deepEqual(compileInstruction('when area(zone != "x") until delete()'), program({ kind: 'areas', filter: [cond('zone', '!=', lit('x', true))] }, [], [[{ kind: 'delete' }]]));
  });

  it('takes several ;-separated chains in then and until, a trailing ; or none, and chains of actions', () => {
    const expected = program(objects(), [[set('a', 1)], [set('b', 2), { kind: 'sendToUrl', url: 'https://example.com/x' }]], [[{ kind: 'delete' }]]);
    assert.deepEqual(compileInstruction('when object() then set(a, 1); set(b, 2).sendToUrl("https://example.com/x") until delete()'), expected);
    assert.deepEqual(compileInstruction('when object()\nthen\n  set(a, 1);\n  set(b, 2)\n    .sendToUrl("https://example.com/x");\nuntil\n  delete();\n'), expected);
  });

  it('reads the keywords in any case, and everything on one line or spread over many', () => {
    const expected = program(objects(cond('a', '>=', lit(1))), [[{ kind: 'delete' }]]);
    assert.deepEqual(compileInstruction('WHEN object(a>=1) THEN delete()'), expected);
    assert.deepEqual(compileInstruction('When object(a>=1)Then delete()'), expected);
    assert.deepEqual(compileInstruction('\t\r\n when\r\n object (\n a\n >=\n 1\n )\n then\n delete\n(\n)\n\n'), expected);
  });

  it('reads every spelling of every unit, with or without a space, and fractions', () => {
    const units: [PeriodUnit, number, string[]][] = [
      ['week', 604_800_000, ['week', 'weeks', 'w', 'wk', 'WEEKS']],
      ['day', 86_400_000, ['day', 'days', 'd', 'Day']],
      ['hour', 3_600_000, ['hour', 'hours', 'h', 'H']],
      ['minute', 60_000, ['minute', 'minutes', 'min', 'mins', 'm', 'Min']],
      ['second', 1000, ['second', 'seconds', 'sec', 's', 'S']],
    ];
    for (const [unit, ms, spellings] of units) {
      for (const spelling of spellings) {
        for (const space of ['', ' ', '\n']) {
          const source = `every 3${space}${spelling}\nwhen object() then delete()`;
          assert.deepEqual(compileInstruction(source).every, { amount: 3, unit, ms: 3 * ms, at: { line: 1, column: 7, offset: 6 } }, source);
        }
      }
    }
    assert.deepEqual(compileInstruction('every 1.5h when object() then delete()').every, { amount: 1.5, unit: 'hour', ms: 5_400_000, at: { line: 1, column: 7, offset: 6 } });
    assert.deepEqual(compileInstruction('every 0.1 min when object() then delete()').every?.ms, 6000);
    assert.deepEqual(compileInstruction('every 1 s when object() then delete()').every?.ms, 1000);
    assert.deepEqual(compileInstruction('every 365 days when object() then delete()').every?.ms, 365 * 86_400_000);
    assert.deepEqual(compileInstruction('every10 min when object() then delete()').every?.ms, 600_000);
  });

  it('types values: quoted strings with JSON escapes, numbers, true, false, null, bare words', () => {
    const source = String.raw`when object(a="x\"y\\z\u00e9\n\/", b=-1.5e3, c=true, d=false, e=null, f=-0, g=05, h=+1, i=.5, j=1.2.3, k=http://127.0.0.1:3000/x, l=\#fff, m=caf&é😀, n="true", o="") then delete()`;
    assert.deepEqual(compileInstruction(source).when, {
      kind: 'objects',
      filter: [
        cond('a', '=', lit('x"y\\zé\n/', true)),
        cond('b', '=', lit(-1500)),
        cond('c', '=', lit(true)),
        cond('d', '=', lit(false)),
        cond('e', '=', lit(null)),
        cond('f', '=', lit(0)),
        cond('g', '=', lit('05')),
        cond('h', '=', lit('+1')),
        cond('i', '=', lit('.5')),
        cond('j', '=', lit('1.2.3')),
        cond('k', '=', lit('http://127.0.0.1:3000/x')),
        cond('l', '=', lit('#fff')),
        cond('m', '=', lit('caf&é😀')),
        cond('n', '=', lit('true', true)),
        cond('o', '=', lit('', true)),
      ],
    });
  });

  it('reads the six operators, with or without spaces, quoted and $ property names, $id', () => {
    const source = 'when object(a=1, b != 1, c<1, d >1, e<= 1, f>=1, "my key"="v", $id = "car-1", "$id"=x) then delete()';
    assert.deepEqual(compileInstruction(source).when, {
      kind: 'objects',
      filter: [
        cond('a', '=', lit(1)),
        cond('b', '!=', lit(1)),
        cond('c', '<', lit(1)),
        cond('d', '>', lit(1)),
        cond('e', '<=', lit(1)),
        cond('f', '>=', lit(1)),
        cond('my key', '=', lit('v', true)),
        cond('$id', '=', lit('car-1', true)),
        cond('$id', '=', lit('x')),
      ],
    });
  });

  it('skips # comments to the end of the line, but not inside strings or as \\#', () => {
    const source = [
      '# colour areas that hold a scooter',
      'when # the group',
      '  object(type=scooter# no space needed',
      '  , note="# not a comment", tag=\\#a) # after',
      'then set(colour, "#fff") # last line without a newline'
    ].join('\n');
    assert.deepEqual(
      compileInstruction(source),
      program(objects(cond('type', '=', lit('scooter')), cond('note', '=', lit('# not a comment', true)), cond('tag', '=', lit('#a'))), [[set('colour', '#fff')]]),
    );
  });

  it('sets any constant: strings, numbers, booleans and null (which removes the key)', () => {
    assert.deepEqual(compileInstruction('when object() then set(a, 1); set("b", true); set(c, null); set(d, "x y")').then, [
      [set('a', 1)],
      [set('b', true)],
      [set('c', null)],
      [set('d', 'x y')],
    ]);
  });

  it('keeps positions in the syntax tree', () => {
    assert.deepEqual(parseInstruction('every 2s\nwhen object(a=1)\nthen delete()'), {
      every: { amount: 2, unit: 'second', ms: 2000, at: { line: 1, column: 7, offset: 6 } },
      when: {
        calls: [
          {
            name: 'object',
            args: [
              {
                kind: 'comparison',
                field: 'a',
                op: '=',
                value: { kind: 'literal', value: 1, quoted: false, at: { line: 2, column: 15, offset: 23 } },
                at: { line: 2, column: 13, offset: 21 },
              },
            ],
            at: { line: 2, column: 6, offset: 14 },
          },
        ],
        at: { line: 2, column: 6, offset: 14 },
      },
      then: [{ calls: [{ name: 'delete', args: [], at: { line: 3, column: 6, offset: 31 } }], at: { line: 3, column: 6, offset: 31 } }],
      until: [],
    });
  });
});

describe('HiveScript: refused forms', () => {
  const refused: [string, string][] = [
    // The grammar.
    [CLIENT_SYNTAX_ERROR, 'Line 3, column 17: expected "(" but found "o"'],
    ['', 'Line 1, column 1: expected "every" or "when" but found the end of the instruction'],
    ['   \n  ', 'Line 2, column 3: expected "every" or "when" but found the end of the instruction'],
    ['then delete()', 'Line 1, column 1: expected "every" or "when" but found "t"'],
    ['when object()', 'Line 1, column 14: expected ".", "then" or "until" but found the end of the instruction'],
    ['when object() then', 'Line 1, column 19: expected a function name but found the end of the instruction'],
    ['when object() then until delete()', 'Line 1, column 20: expected a function name but found "u"'],
    ['when object() until delete() then delete()', 'Line 1, column 30: expected ".", ";" or the end of the instruction but found "t"'],
    ['when object() then delete() every 5 s', 'Line 1, column 29: expected ".", ";", "until" or the end of the instruction but found "e"'],
    ['when object() then delete();; set(a, b)', 'Line 1, column 29: expected a function name, "until" or the end of the instruction but found ";"'],
    ['when object(); object() then delete()', 'Line 1, column 14: expected ".", "then" or "until" but found ";"'],
    ['when object(a=1 b=2) then delete()', 'Line 1, column 17: expected "," or ")" but found "b"'],
    ['when object(a=1,) then delete()', 'Line 1, column 17: expected a comparison or a value but found ")"'],
    ['when object(type "car") then delete()', 'Line 1, column 18: expected an operator (=, !=, <, >, <=, >=), "(", "," or ")" but found "\\""'],
    ['when object(a==1) then delete()', 'Line 1, column 15: expected a value but found "="'],
    ["when object(a='x') then delete()", 'Line 1, column 15: expected a value but found "\'"'],
    ['when object(a=) then delete()', 'Line 1, column 15: expected a value but found ")"'],
    ['when object(\n  a="abc\n) then delete()', 'Line 2, column 9: the string is not closed before the end of the line (a string ends with " on the line where it starts)'],
    ['when object(a="abc', 'Line 1, column 19: the string is not closed (a string ends with ")'],
    ['when object(a="a\\q") then delete()', 'Line 1, column 17: a backslash in a string must start an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by four hex digits'],
    ['when object(a=b\\c) then delete()', 'Line 1, column 16: a backslash in a bare word must be followed by "#" (\\# stands for #); write other text as a quoted string'],
    ['when object(a=1) # then delete()', 'Line 1, column 33: expected ".", "then" or "until" but found the end of the instruction'],
    ['whenobject() then delete()', 'Line 1, column 1: expected "every" or "when" but found "w"'],
    ['every 5 when object() then delete()', 'Line 1, column 9: expected a time unit (week, day, hour, minute or second) but found "w"'],
    ['every 5 ms when object() then delete()', 'Line 1, column 9: expected a time unit (week, day, hour, minute or second) but found "m"'],
    ['every 1h 30m when object() then delete()', 'Line 1, column 10: expected "when" but found "3"'],
    ['every -5 s when object() then delete()', 'Line 1, column 7: expected a number but found "-"'],
    ['every 1e3 s when object() then delete()', 'Line 1, column 8: expected a time unit (week, day, hour, minute or second) but found "e"'],
    ['every five minutes when object() then delete()', 'Line 1, column 7: expected a number but found "f"'],
    ['(((((((((((((((((((((((((((((((((((when', 'Line 1, column 33: calls nest more than 32 levels deep'],
    // The checker.
    ['every 0 s when object() then delete()', 'Line 1, column 7: the period of every must be at least 1 second (got 0 seconds)'],
    ['every 0.5s when object() then delete()', 'Line 1, column 7: the period of every must be at least 1 second (got 0.5 seconds)'],
    ['every 53 weeks when object() then delete()', 'Line 1, column 7: the period of every must be at most 365 days (got 53 weeks)'],
    ['when blablub() then delete()', 'Line 1, column 6: unknown function blablub(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when Object() then delete()', 'Line 1, column 6: unknown function Object(); did you mean object()? (function names are case-sensitive)'],
    ['when toString() then delete()', 'Line 1, column 6: unknown function toString(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when object() then constructor()', 'Line 1, column 20: unknown function constructor(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when object(a<__proto__().get(x)) then delete()', 'Line 1, column 15: unknown function __proto__(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when object().near(5) then delete()', 'Line 1, column 15: unknown function near(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when object() then sendtourl("http://x")', 'Line 1, column 20: unknown function sendtourl(); did you mean sendToUrl()? (function names are case-sensitive)'],
    ['when set(a, b) then delete()', 'Line 1, column 6: set() cannot stand at the start of a when part (which begins with object() or area()): set() is an action and belongs in a then or until part'],
    ['when within(5) then delete()', 'Line 1, column 6: within() cannot stand at the start of a when part (which begins with object() or area()): within() narrows a selection and follows object() in a when part'],
    ['when object().delete() then delete()', 'Line 1, column 15: delete() cannot follow object() in a when part; object() may be followed by within() or inside()'],
    ['when object().get(x) then delete()', 'Line 1, column 15: get() cannot follow object() in a when part; object() may be followed by within() or inside()'],
    ['when area().within(5) then delete()', 'Line 1, column 13: within() cannot follow area() in a when part; area() may be followed by containing()'],
    ['when object().containing(a=1) then delete()', 'Line 1, column 15: containing() cannot follow object() in a when part; object() may be followed by within() or inside()'],
    ['when object().inside().within(5) then delete()', 'Line 1, column 24: within() cannot follow inside(): a when part is object(...) or area(...) followed by at most one of within(), inside(), containing()'],
    ['when object().within(5).set(a, 1) then delete()', 'Line 1, column 25: set() cannot stand in a when part: set() is an action and belongs in a then or until part'],
    ['when object(car) then delete()', 'Line 1, column 13: object() takes comparisons such as type="car", not a plain value'],
    ['when object().within(type=car) then delete()', 'Line 1, column 22: within() needs a radius in metres as its first argument, as in within(100, type="car")'],
    ['when object().within() then delete()', 'Line 1, column 15: within() needs a radius in metres as its first argument, as in within(100, type="car")'],
    ['when object().within("10") then delete()', 'Line 1, column 22: within() needs a radius in metres as its first argument, as in within(100, type="car")'],
    ['when object().within(0) then delete()', 'Line 1, column 22: the radius of within() must be greater than 0 metres'],
    ['when object().within(-3) then delete()', 'Line 1, column 22: the radius of within() must be greater than 0 metres'],
    ['when object().within(5, car) then delete()', 'Line 1, column 25: within() takes comparisons such as type="car", not a plain value'],
    ['when object(a=1e999) then delete()', 'Line 1, column 15: the number is out of range'],
    ['when object("" = 1) then delete()', 'Line 1, column 13: the property name of a comparison cannot be empty'],
    ['when object(a="\\ud800") then delete()', 'Line 1, column 15: the string holds an unpaired UTF-16 surrogate (not valid Unicode)'],
    ['when object(a<this().get(b)) then delete()', 'Line 1, column 15: this() stands only in the partner comparisons of within(), as in within(100, type="bridge", height<this().get("height"))'],
    ['when object().within(5, a<this()) then delete()', 'Line 1, column 27: this() must be followed by .get(<name>) to give a value'],
    ['when object().within(5, a<this(x).get(b)) then delete()', 'Line 1, column 32: this() takes no arguments'],
    ['when object(a<object()) then delete()', 'Line 1, column 15: object() in a comparison must be followed by .get(<name>) to give values'],
    ['when object(a<object(c<object().get(d)).get(b)) then delete()', 'Line 1, column 24: a value from object(...).get(...) cannot be used inside another one'],
    ['when object(a<object().get()) then delete()', 'Line 1, column 24: get() needs a property name as its first argument, as in get("value")'],
    ['when object(a<object().get(b, c)) then delete()', 'Line 1, column 31: get() takes exactly one property name'],
    ['when object(a<object().get(b).get(c)) then delete()', 'Line 1, column 31: nothing can follow get() in a value'],
    ['when object(a<area().get(b)) then delete()', 'Line 1, column 15: area() cannot give a value; a value is a constant, object(...).get(<name>) or, inside within(), this().get(<name>)'],
    ['when object(a<foo().get(b)) then delete()', 'Line 1, column 15: unknown function foo(); the functions are object(), area(), within(), inside(), containing(), set(), delete(), sendToUrl(), get(), this()'],
    ['when object() then object()', 'Line 1, column 20: object() cannot stand in a then or until part (which holds the actions set(), delete() and sendToUrl()): object() selects things and starts a when part'],
    ['when object() then set(a, 1).get(a)', 'Line 1, column 30: get() cannot stand in a then or until part (which holds the actions set(), delete() and sendToUrl()): get() gives values and is used on the right of a comparison, as in object(type="dial").get("value")'],
    ['when object() then delete(a=1)', 'Line 1, column 27: delete() takes no arguments, as in delete()'],
    ['when object() then set(a)', 'Line 1, column 20: set() takes two arguments, as in set("status", "arrived")'],
    ['when object() then set(a, b, c)', 'Line 1, column 30: set() takes two arguments, as in set("status", "arrived")'],
    ['when object() then set(a=b, c)', 'Line 1, column 24: set() takes plain values, not comparisons, as in set("status", "arrived")'],
    ['when object() then set(a, object().get(b))', 'Line 1, column 27: set() takes constant values, as in set("status", "arrived")'],
    ['when object() then set(5, b)', 'Line 1, column 24: set() needs a property name as its first argument, as in set("status", "arrived")'],
    ['when object() then set("", b)', 'Line 1, column 24: set() needs a non-empty property name'],
    ['when object() then set($id, b)', 'Line 1, column 24: set() cannot change $id (the id is not a data property)'],
    ['when object() then set("$label", b)', 'Line 1, column 24: set() cannot change $label (the label is not a data property)'],
    ['when object() then delete().set(a, 1)', 'Line 1, column 29: set() cannot follow delete(): the things it would set are deleted'],
    ['when object() then sendToUrl()', 'Line 1, column 20: sendToUrl() takes one argument, as in sendToUrl("https://example.com/hook")'],
    ['when object() then sendToUrl(5)', 'Line 1, column 30: sendToUrl() needs a URL, as in sendToUrl("https://example.com/hook")'],
    ['when object() then sendToUrl(example.com)', 'Line 1, column 30: sendToUrl() needs a full URL beginning with http:// or https:// (got "example.com")'],
    ['when object() then sendToUrl(ftp://example.com/x)', 'Line 1, column 30: sendToUrl() sends to http:// or https:// URLs only (got "ftp://example.com/x")'],
    ['when object() then sendToUrl(http://x/?a=b)', 'Line 1, column 30: sendToUrl() takes a URL, not a comparison; write a URL that holds =, <, > or ! as a quoted string, as in sendToUrl("https://example.com/hook?a=b")'],
    ['when object() then delete() until sendToUrl("file:///etc/passwd")', 'Line 1, column 45: sendToUrl() sends to http:// or https:// URLs only (got "file:///etc/passwd")'],
  ];
  for (const [source, detail] of refused) {
    it(`refuses ${JSON.stringify(source.length > 60 ? `${source.slice(0, 60)}…` : source)}`, () => {
      const error = refusal(source);
      assert.equal(error.message, `Error: Incorrect Syntax. ${detail}.`);
      const [, line, column] = /^Line (\d+), column (\d+)/.exec(detail) ?? [];
      assert.equal(error.line, Number(line));
      assert.equal(error.column, Number(column));
    });
  }
});

// ---- Properties ----------------------------------------------------------------------------

const UNIT_SPELLINGS: Record<PeriodUnit, string[]> = {
  week: ['week', 'weeks', 'w', 'wk'],
  day: ['day', 'days', 'd'],
  hour: ['hour', 'hours', 'h'],
  minute: ['minute', 'minutes', 'min', 'mins', 'm'],
  second: ['second', 'seconds', 'sec', 's'],
};
const UNIT_MS: Record<PeriodUnit, number> = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1000 };
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
// The grammar's bare-word characters: no control characters, spaces or punctuation of the language.
// eslint-disable-next-line no-control-regex
const BARE_WORD = /^[^\x00-\x20\x7f\u00a0\ufeff,()"'`;=<>!\\]+$/;

/** Whether a string may be written as a bare word and reads back as that string. */
const bareString = (text: string): boolean => BARE_WORD.test(text) && !['true', 'false', 'null'].includes(text) && !JSON_NUMBER.test(text);

/** Source text for the printer: `sep(required)` gives whitespace or comments between tokens. */
interface Layout {
  seps: string[];
  upper: boolean;
  bare: boolean[];
}

function printer(layout: Layout): { text: string; emit: (token: string) => void; sep: (required?: boolean) => void; bare: () => boolean; keyword: (word: string) => string } {
  let n = 0;
  const out = {
    text: '',
    emit(token: string) {
      out.text += token;
    },
    sep(required = false) {
      const s = layout.seps[n++ % layout.seps.length] ?? ' ';
      out.text += s === '' && required ? ' ' : s;
    },
    bare: () => layout.bare[n++ % layout.bare.length] ?? false,
    keyword: (word: string) => (layout.upper ? word.toUpperCase() : word),
  };
  return out;
}

type Printer = ReturnType<typeof printer>;

const bareEscaped = (text: string): string => text.replaceAll('#', '\\#');

function printString(p: Printer, text: string): void {
  p.emit(bareString(text) && p.bare() ? bareEscaped(text) : JSON.stringify(text));
}

function printScalar(p: Printer, value: string | number | boolean | null, quoted: boolean): void {
  if (typeof value === 'string') p.emit(quoted ? JSON.stringify(value) : bareEscaped(value));
  else p.emit(String(value));
}

function printCall(p: Printer, name: string, args: ((p: Printer) => void)[]): void {
  p.emit(name);
  p.sep();
  p.emit('(');
  args.forEach((arg, i) => {
    p.sep();
    if (i > 0) {
      p.emit(',');
      p.sep();
    }
    arg(p);
  });
  p.sep();
  p.emit(')');
}

function printConditions(conditions: Condition[]): ((p: Printer) => void)[] {
  return conditions.map((c) => (p: Printer) => {
    printString(p, c.field);
    p.sep();
    p.emit(c.op);
    p.sep();
    const v = c.value;
    if (v.kind === 'literal') printScalar(p, v.value, v.quoted);
    else if (v.kind === 'this') {
      printCall(p, 'this', []);
      p.sep();
      p.emit('.');
      printCall(p, 'get', [(q) => printString(q, v.field)]);
    } else {
      printCall(p, 'object', printConditions(v.of));
      p.emit('.');
      p.sep();
      printCall(p, 'get', [(q) => printString(q, v.field)]);
    }
  });
}

function printChainList(p: Printer, chains: Action[][]): void {
  chains.forEach((chain, i) => {
    if (i > 0) {
      p.sep();
      p.emit(';');
      p.sep();
    }
    chain.forEach((action, j) => {
      if (j > 0) {
        p.sep();
        p.emit('.');
        p.sep();
      }
      if (action.kind === 'delete') printCall(p, 'delete', []);
      else if (action.kind === 'sendToUrl') printCall(p, 'sendToUrl', [(q) => printString(q, action.url)]);
      else {
        const value = action.value;
        printCall(p, 'set', [(q) => printString(q, action.name), (q) => (typeof value === 'string' ? printString(q, value) : printScalar(q, value, false))]);
      }
    });
  });
}

/** HiveScript source for `program`; `every.at` is where the printer put the amount. */
function print(program: Program, layout: Layout, unitSpelling: number): { source: string; every: Period | null } {
  const p = printer(layout);
  p.sep();
  let every: Period | null = null;
  if (program.every !== null) {
    p.emit(p.keyword('every'));
    p.sep(true);
    const lines = p.text.split('\n');
    every = { ...program.every, at: { line: lines.length, column: (lines[lines.length - 1] ?? '').length + 1, offset: p.text.length } };
    p.emit(String(program.every.amount));
    p.sep();
    const spellings = UNIT_SPELLINGS[program.every.unit];
    p.emit(p.keyword(spellings[unitSpelling % spellings.length] ?? ''));
    p.sep(true);
  }
  p.emit(p.keyword('when'));
  p.sep(true);
  const w = program.when;
  printCall(p, w.kind === 'areas' || w.kind === 'areasContaining' ? 'area' : 'object', printConditions(w.filter));
  if (w.kind === 'pairs') {
    p.sep();
    p.emit('.');
    printCall(p, 'within', [(q) => q.emit(String(w.radius)), ...printConditions(w.partner)]);
  } else if (w.kind === 'objectsInside') {
    p.emit('.');
    printCall(p, 'inside', printConditions(w.areas));
  } else if (w.kind === 'areasContaining') {
    p.emit('.');
    printCall(p, 'containing', printConditions(w.objects));
  }
  if (program.then.length > 0) {
    p.sep();
    p.emit(p.keyword('then'));
    p.sep(true);
    printChainList(p, program.then);
  }
  if (program.until.length > 0) {
    p.sep(true);
    p.emit(p.keyword('until'));
    p.sep(true);
    printChainList(p, program.until);
  }
  if (p.bare()) p.emit(';');
  p.sep();
  return { source: p.text, every };
}

const text = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
  fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '.', ':', '/', '$', '#', '%', '_', 'é', '😀', '[', '{', '?', '&'), minLength: 1, maxLength: 8 }),
);
const name = fc.oneof(text, fc.constantFrom('$id', '$label'));
const number = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (n === 0 ? 0 : n));
const scalarLiteral: fc.Arbitrary<ValueExpr> = fc.oneof(
  fc.record({ kind: fc.constant('literal' as const), value: text, quoted: fc.constant(true) }),
  fc.record({ kind: fc.constant('literal' as const), value: text.filter(bareString), quoted: fc.constant(false) }),
  fc.record({ kind: fc.constant('literal' as const), value: fc.oneof(number, fc.boolean(), fc.constant(null)), quoted: fc.constant(false) }),
);
const ops = fc.constantFrom<Condition['op']>('=', '!=', '<', '>', '<=', '>=');
const plainConditions = fc.array(fc.record({ field: name, op: ops, value: scalarLiteral }), { maxLength: 3 });
const aggregate = fc.record({ field: name, op: ops, value: fc.record({ kind: fc.constant('aggregate' as const), of: plainConditions, field: name.filter((f) => f !== '') }) });
const topConditions = fc.array(fc.oneof({ weight: 4, arbitrary: fc.record({ field: name, op: ops, value: scalarLiteral }) }, { weight: 1, arbitrary: aggregate }), { maxLength: 3 });
const partnerConditions = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ field: name, op: ops, value: scalarLiteral }) },
    { weight: 1, arbitrary: aggregate },
    { weight: 1, arbitrary: fc.record({ field: name, op: ops, value: fc.record({ kind: fc.constant('this' as const), field: name }) }) },
  ),
  { maxLength: 3 },
);
const whenSet: fc.Arbitrary<WhenSet> = fc.oneof(
  fc.record({ kind: fc.constant('objects' as const), filter: topConditions }),
  fc.record({ kind: fc.constant('areas' as const), filter: topConditions }),
  fc.record({ kind: fc.constant('pairs' as const), filter: topConditions, radius: fc.double({ min: 0.001, max: 1e7, noNaN: true }), partner: partnerConditions }),
  fc.record({ kind: fc.constant('objectsInside' as const), filter: topConditions, areas: topConditions }),
  fc.record({ kind: fc.constant('areasContaining' as const), filter: topConditions, objects: topConditions }),
);
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), name: text.filter((n) => n !== '$id' && n !== '$label'), value: fc.oneof(text, number, fc.boolean(), fc.constant(null)) }),
  fc.constant({ kind: 'delete' as const }),
  fc.record({ kind: fc.constant('sendToUrl' as const), url: fc.webUrl() }),
);
const chain = fc.array(action, { minLength: 1, maxLength: 3 }).filter((actions) => actions.every((a, i) => a.kind !== 'set' || actions[i - 1]?.kind !== 'delete'));
const period: fc.Arbitrary<Period> = fc
  .record({ amount: fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 9999 }).map((n) => n / 10)), unit: fc.constantFrom<PeriodUnit>('week', 'day', 'hour', 'minute', 'second') })
  .map(({ amount, unit }) => ({ amount, unit, ms: Math.round(amount * UNIT_MS[unit]), at: { line: 0, column: 0, offset: 0 } }))
  .filter((p) => p.ms >= 1000 && p.ms <= 365 * 86_400_000);
const programs: fc.Arbitrary<Program> = fc
  .record({ every: fc.option(period), when: whenSet, then: fc.array(chain, { maxLength: 3 }), until: fc.array(chain, { maxLength: 3 }) })
  .filter((p) => p.then.length + p.until.length > 0);
const layouts: fc.Arbitrary<Layout> = fc.record({
  seps: fc.array(fc.constantFrom('', ' ', '\n', '\t', '\r\n', '  # a comment ( " ; \n', '\n\n   '), { minLength: 1, maxLength: 12 }),
  upper: fc.boolean(),
  bare: fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
});

/** Checks that `error` is a refusal that points into `source`. */
function assertRefusalInside(error: unknown, source: string): void {
  assert.ok(error instanceof InstructionSyntaxError, `not a refusal: ${String(error)}`);
  assert.equal(error.code, 'invalid_instruction');
  assert.match(error.message, /^Error: Incorrect Syntax\. Line \d+, column \d+: [^\n]+\.$/);
  const lines = source.split('\n');
  assert.ok(error.line >= 1 && error.line <= lines.length, `line ${error.line} of ${lines.length}`);
  assert.ok(error.column >= 1 && error.column <= (lines[error.line - 1] ?? '').length + 1, `column ${error.column}`);
}

describe('HiveScript: properties', () => {
  it('compiling the printed text of a random Program gives that Program', () => {
    fc.assert(
      fc.property(programs, layouts, fc.nat(), (expected, layout, spelling) => {
        const { source, every } = print(expected, layout, spelling);
        // JSON: fast-check's records have no prototype, the compiled Program's objects do.
        assert.deepEqual(compileInstruction(source), JSON.parse(JSON.stringify({ ...expected, every })), source);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses any other text only with an InstructionSyntaxError that points into it', () => {
    const tokens = [
      'every', 'when', 'then', 'until', 'object', 'area', 'within', 'inside', 'containing', 'set', 'delete', 'sendToUrl', 'get', 'this',
      '(', ')', '.', ',', ';', '=', '!=', '<', '>=', '"', '"a"', '\\', '\\#', '#', '\n', ' ', '\t', '5', '-1', '0.5', 's', 'min', 'x', '$id', 'http://a/b', '\'', 'é', '\ud800',
    ];
    const garbage = fc.oneof(fc.array(fc.constantFrom(...tokens), { maxLength: 40 }).map((parts) => parts.join('')), fc.string({ unit: 'binary', maxLength: 60 }));
    fc.assert(
      fc.property(garbage, (source) => {
        try {
          compileInstruction(source);
        } catch (error) {
          assertRefusalInside(error, source);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a deep nest of calls without exhausting the stack, and stays fast on a long source', () => {
    const deep = `when object(${'a<object('.repeat(20_000)}`;
    const error = refusal(deep);
    assert.equal(error.message, 'Error: Incorrect Syntax. Line 1, column 300: calls nest more than 32 levels deep.');
    const long = `when object(${Array.from({ length: 2000 }, (_, i) => `k${i}="v${i}"`).join(', ')}) then ${Array.from({ length: 500 }, (_, i) => `set(a${i}, ${i})`).join('.')}`;
    const started = performance.now();
    const compiled = compileInstruction(long);
    const elapsed = performance.now() - started;
    assert.equal(compiled.when.filter.length, 2000);
    assert.ok(elapsed < 2000, `compiled ${long.length} characters in ${elapsed.toFixed(0)} ms`);
  });
});
