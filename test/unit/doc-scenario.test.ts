/**
 * The scenario notation of docs/instructions.md (test/support/doc-scenario.ts): what each line
 * reads as, and a line it cannot read named by its line in the document, so that a typo in a
 * scenario fails the run instead of being skipped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseScenario } from '../support/doc-scenario.js';

describe('doc scenarios', () => {
  it('reads the realm before the instruction, then the writes and expectations in order', () => {
    const scenario = parseScenario(
      [
        'object van1 at 13.40,52.50 {"type":"van"}',
        'object s1',
        'area depot circle 13.4,-52.5 200 {"kind":"depot"}',
        '',
        'write van1 at 13.401,52.50',
        'write s1 {"charge":0.1}',
        'write area depot {"open":true}',
        'delete s1',
        'expect van1 {"status":"arrived","note":null}',
        'expect area depot {"$hkt_color":"#62ec46"}',
        'expect deleted s1',
        'expect post /hooks?a=b van1+depot1 s1',
      ].join('\n'),
      10,
    );
    assert.deepEqual(scenario.given.map((s) => [s.line, s.step]), [
      [11, { kind: 'object', id: 'van1', location: { longitude: 13.4, latitude: 52.5 }, data: { type: 'van' } }],
      [12, { kind: 'object', id: 's1', location: null, data: {} }],
      [13, { kind: 'area', id: 'depot', centre: { longitude: 13.4, latitude: -52.5 }, radius: 200, data: { kind: 'depot' } }],
    ]);
    assert.deepEqual(scenario.steps.map((s) => [s.line, s.step]), [
      [15, { kind: 'write', id: 'van1', location: { longitude: 13.401, latitude: 52.5 }, data: null }],
      [16, { kind: 'write', id: 's1', location: null, data: { charge: 0.1 } }],
      [17, { kind: 'write-area', id: 'depot', data: { open: true } }],
      [18, { kind: 'delete', id: 's1' }],
      [19, { kind: 'expect', id: 'van1', data: { status: 'arrived', note: null } }],
      [20, { kind: 'expect-area', id: 'depot', data: { $hkt_color: '#62ec46' } }],
      [21, { kind: 'expect-deleted', id: 's1' }],
      [22, { kind: 'expect-post', path: '/hooks?a=b', entries: ['van1+depot1', 's1'] }],
    ]);
    assert.equal(scenario.steps[4]?.text, 'expect van1 {"status":"arrived","note":null}');
  });

  const refused: [string, string][] = [
    ['expect s1 {"a":1}\nexpcet s1 {"a":1}', 'docs/instructions.md:3: unknown step "expcet" (object, area, write, delete, expect)'],
    ['expect s1 {a:1}', 'docs/instructions.md:2: expected a JSON object but found "{a:1}"'],
    ['expect s1 [1]', 'docs/instructions.md:2: expected a JSON object but found "[1]"'],
    ['object s1 at 13.4 {"a":1}\nexpect s1 {}', 'docs/instructions.md:2: expected <longitude>,<latitude> but found "13.4"'],
    ['area a circle 1,2 {"a":1}\nexpect area a {}', 'docs/instructions.md:2: expected area <id> circle <longitude>,<latitude> <radius> [<JSON data>]'],
    ['write s1', 'docs/instructions.md:2: a write needs a location, data or both'],
    ['expect post hooks s1', 'docs/instructions.md:2: expected expect post <path> <entry> [<entry> ...]'],
    ['expect post /hooks', 'docs/instructions.md:2: expected expect post <path> <entry> [<entry> ...]'],
    ['write s1 {"a":1}\nobject s2\nexpect s2 {}', 'docs/instructions.md:3: object lines come before the writes and expectations (a later object is a write)'],
    ['object s1 {"a":1}', 'docs/instructions.md:1: the scenario expects nothing'],
  ];
  for (const [body, message] of refused) {
    it(`refuses ${JSON.stringify(body)}`, () => {
      assert.throws(() => parseScenario(body, 1), { message });
    });
  }
});
