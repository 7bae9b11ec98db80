/** kind-runs.ts: how the NATS bus cuts a publish call into one message per kind, keeping each object's order. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { kindRuns } from '../../internal/events/kind-runs.js';
import type { LocusEvent } from '../../internal/events/port.js';

const R = 'fleet';
const obj = (id: string): LocusEvent => ({ kind: 'obj', realm: R, object: { id } } as unknown as LocusEvent);
const loc = (id: string): LocusEvent => ({ kind: 'loc', realm: R, object: { id } } as unknown as LocusEvent);
const ent = (id: string, area: string): LocusEvent => ({ kind: 'ent', realm: R, object: id, area, time: 't' });
const exi = (id: string, area: string): LocusEvent => ({ kind: 'exi', realm: R, object: id, area, time: 't' });
const delObject = (id: string): LocusEvent => ({ kind: 'del', realm: R, object: id });
const delArea = (id: string): LocusEvent => ({ kind: 'del', realm: R, area: id });
const cst = (id: string): LocusEvent => ({ kind: 'cst', realm: R, object: id, status: 'con' });
const pub = (id: string): LocusEvent => ({ kind: 'pub', realm: R, eve: 'e', idp: id, dat: null });

const keyOf = (e: LocusEvent): string =>
  e.kind === 'loc' || e.kind === 'obj'
    ? `o${(e.object as { id: string }).id}`
    : e.kind === 'pub'
      ? `o${e.idp}`
      : e.kind === 'are'
        ? `a${e.area.id}`
        : 'object' in e
          ? `o${e.object}`
          : 'area' in e
            ? `a${e.area}`
            : e.kind;

const show = (runs: { kind: string; events: LocusEvent[] }[]): string[] => runs.map((r) => `${r.kind}:${r.events.map(keyOf).join(',')}`);

describe('kindRuns', () => {
  it('gathers a bulk write\'s interleaved events into one run per kind, each object\'s events in order', () => {
    const events = [obj('a'), loc('a'), obj('b'), loc('b'), exi('b', 'A'), ent('b', 'B'), obj('c'), loc('c'), ent('c', 'A')];
    assert.deepEqual(show(kindRuns(events)), ['obj:oa,ob,oc', 'loc:oa,ob,oc', 'exi:ob', 'ent:ob,oc']);
  });

  it('keeps one run for a single-kind call, and nothing for an empty one', () => {
    assert.deepEqual(show(kindRuns([loc('a'), loc('b')])), ['loc:oa,ob']);
    assert.deepEqual(kindRuns([]), []);
  });

  it('starts a new set rather than move an object\'s event before its earlier one', () => {
    // a enters A, then (second write of a in the same call) exits it: exi must stay after ent.
    const events = [obj('a'), loc('a'), ent('a', 'A'), obj('b'), loc('b'), obj('a'), loc('a'), exi('a', 'A')];
    assert.deepEqual(show(kindRuns(events)), ['obj:oa,ob', 'loc:oa,ob', 'ent:oa', 'obj:oa', 'loc:oa', 'exi:oa']);
  });

  it('keeps areas and objects of the same id apart, and presence with its pub/sub publication', () => {
    assert.deepEqual(show(kindRuns([cst('x'), pub('x'), cst('y'), pub('y')])), ['cst:ox,oy', 'pub:ox,oy']);
    assert.deepEqual(show(kindRuns([delArea('x'), delObject('x'), delArea('y')])), ['del:ax,ox,ay']);
    // pub before cst of the same id: kept in that order, in two sets.
    assert.deepEqual(show(kindRuns([pub('x'), cst('y'), cst('x')])), ['cst:oy', 'pub:ox', 'cst:ox']);
  });

  it('property: a permutation of the input, one kind per run, every key\'s events in input order', () => {
    const event = fc.oneof(
      ...[obj, loc, delObject, cst, pub].map((make) => fc.constantFrom('a', 'b', 'c').map(make)),
      ...[ent, exi].map((make) => fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('A', 'B')).map(([o, a]) => make(o, a))),
      fc.constantFrom('a', 'A').map(delArea),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const runs = kindRuns(events);
        for (const run of runs) {
          assert.ok(run.events.length > 0);
          for (const e of run.events) assert.equal(e.kind, run.kind);
        }
        const flat = runs.flatMap((run) => run.events);
        assert.equal(flat.length, events.length);
        assert.deepEqual(new Set(flat), new Set(events));
        const byKey = (list: readonly LocusEvent[]): Map<string, LocusEvent[]> => {
          const map = new Map<string, LocusEvent[]>();
          for (const e of list) map.set(keyOf(e), [...(map.get(keyOf(e)) ?? []), e]);
          return map;
        };
        const before = byKey(events);
        for (const [key, list] of byKey(flat)) assert.deepEqual(list, before.get(key), key);
      }),
      { numRuns: 500 },
    );
  });

  it('property: a bulk write of distinct objects takes at most four runs (obj, loc, exi, ent)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 50 }), fc.array(fc.nat(3), { minLength: 50, maxLength: 50 }), (ids, shapes) => {
        const events = ids.flatMap((id, i) => {
          const s = shapes[i] ?? 0;
          return [obj(id), loc(id), ...(s & 1 ? [exi(id, 'A')] : []), ...(s & 2 ? [ent(id, 'B')] : [])];
        });
        assert.ok(kindRuns(events).length <= 4);
      }),
    );
  });
});
