/** kind-runs.ts: how the NATS bus cuts a publish call into one message per kind, keeping each object's order. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { kindRuns } from '../../internal/events/kind-runs.js';
import type { LocusEvent } from '../../internal/events/port.js';

const R = 'fleet';
const change = { old: null, new: null, history: [], time: 't' };
const obj = (id: string): LocusEvent => ({ kind: 'object', realm: R, change: { realm: R, id, ...change } });
const ent = (id: string, area: string): LocusEvent => ({ kind: 'entered', realm: R, object: id, area, time: 't' });
const exi = (id: string, area: string): LocusEvent => ({ kind: 'exited', realm: R, object: id, area, time: 't' });
const are = (id: string): LocusEvent => ({ kind: 'area', realm: R, change: { realm: R, id, old: null, new: null } });
const cst = (id: string): LocusEvent => ({ kind: 'cst', realm: R, object: id, status: 'con' });
const pub = (id: string): LocusEvent => ({ kind: 'pub', realm: R, eve: 'e', idp: id, dat: null });

const keyOf = (e: LocusEvent): string =>
  e.kind === 'object'
    ? `o${e.change.id}`
    : e.kind === 'pub'
      ? `o${e.idp}`
      : e.kind === 'area'
        ? `a${e.change.id}`
        : 'object' in e
          ? `o${e.object}`
          : e.kind;

const show = (runs: { kind: string; events: LocusEvent[] }[]): string[] => runs.map((r) => `${r.kind}:${r.events.map(keyOf).join(',')}`);

describe('kindRuns', () => {
  it('gathers interleaved events into one run per kind, each object\'s events in order', () => {
    const events = [obj('a'), obj('b'), exi('b', 'A'), ent('b', 'B'), obj('c'), ent('c', 'A'), exi('d', 'A'), ent('d', 'B')];
    assert.deepEqual(show(kindRuns(events)), ['object:oa,ob,oc', 'exited:ob,od', 'entered:ob,oc,od']);
  });

  it('keeps one run for a single-kind call, and nothing for an empty one', () => {
    assert.deepEqual(show(kindRuns([obj('a'), obj('b')])), ['object:oa,ob']);
    assert.deepEqual(kindRuns([]), []);
  });

  it('starts a new set rather than move an object\'s event before its earlier one', () => {
    // a enters A, then (second write of a in the same call) exits it: exi must stay after ent.
    const events = [obj('a'), ent('a', 'A'), obj('b'), obj('a'), exi('a', 'A')];
    assert.deepEqual(show(kindRuns(events)), ['object:oa,ob', 'entered:oa', 'object:oa', 'exited:oa']);
  });

  it('keeps areas and objects of the same id apart, and presence with its pub/sub publication', () => {
    assert.deepEqual(show(kindRuns([cst('x'), pub('x'), cst('y'), pub('y')])), ['cst:ox,oy', 'pub:ox,oy']);
    assert.deepEqual(show(kindRuns([are('x'), obj('x'), are('y')])), ['object:ox', 'area:ax,ay']);
    // pub before cst of the same id: kept in that order, in two sets.
    assert.deepEqual(show(kindRuns([pub('x'), cst('y'), cst('x')])), ['cst:oy', 'pub:ox', 'cst:ox']);
  });

  it('property: a permutation of the input, one kind per run, every key\'s events in input order', () => {
    const event = fc.oneof(
      ...[obj, cst, pub].map((make) => fc.constantFrom('a', 'b', 'c').map(make)),
      ...[ent, exi].map((make) => fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('A', 'B')).map(([o, a]) => make(o, a))),
      fc.constantFrom('a', 'A').map(are),
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

  it('property: the crossings of a bulk write of distinct objects take at most two runs (exited, entered)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 50 }), fc.array(fc.nat(3), { minLength: 50, maxLength: 50 }), (ids, shapes) => {
        const events = ids.flatMap((id, i) => {
          const s = shapes[i] ?? 0;
          return [...(s & 1 ? [exi(id, 'A')] : []), ...(s & 2 ? [ent(id, 'B')] : [])];
        });
        assert.ok(kindRuns(events).length <= 2);
      }),
    );
  });
});
