/**
 * The instruction engine's evaluation (internal/instructions/engine): the comparison rules,
 * each kind of `when` set kept change by change, the index that picks the instructions a
 * change can affect, and a property test of 10,000 random writes in which, after every write,
 * each instruction's set equals the reference evaluator's (a brute-force re-scan of the realm)
 * and the entries reported joined and left are exactly the differences: `then` once per
 * joining entry, `until` once per leaving one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { Area, Data, Location, ScalarValue, Shape, TrackedObject } from '../../internal/domain/types.js';
import type { Condition, Program, ValueExpr, WhenSet } from '../../internal/instructions/language/ast.js';
import { entryKey } from '../../internal/instructions/language/ast.js';
import { applyAreaChange, applyObjectChange } from '../../internal/instructions/engine/change-evaluation.js';
import { InstructionEvaluator, type MembershipDelta } from '../../internal/instructions/engine/instruction-evaluator.js';
import { InstructionIndex } from '../../internal/instructions/engine/instruction-index.js';
import { RealmMirror } from '../../internal/instructions/engine/realm-mirror.js';
import { referenceEvaluate } from '../../internal/instructions/engine/reference-evaluate.js';

// --- builders -------------------------------------------------------------------------------

const time = '2026-01-01T00:00:00.000Z';
const at = (longitude: number, latitude: number): Location => ({ longitude, latitude, time });
const obj = (id: string, location: Location | null, data: Data = {}, label: string | null = null): TrackedObject => ({ id, label, location, data, seen: null });
const area = (id: string, shape: Shape, data: Data = {}): Area => ({ id, label: null, shape, data });

const lit = (value: ScalarValue, quoted = typeof value === 'string'): ValueExpr => ({ kind: 'literal', value, quoted });
const thisGet = (field: string): ValueExpr => ({ kind: 'this', field });
const aggregate = (of: Condition[], field: string): ValueExpr => ({ kind: 'aggregate', of, field });
const is = (field: string, op: Condition['op'], value: ScalarValue | ValueExpr): Condition => ({
  field,
  op,
  value: value !== null && typeof value === 'object' ? value : lit(value),
});
const program = (when: WhenSet): Program => ({ every: null, when, then: [[{ kind: 'delete' }]], until: [] });

const o = (id: string): string => entryKey({ kind: 'object', id });
const a = (id: string): string => entryKey({ kind: 'area', id });
const p = (x: string, y: string): string => entryKey({ kind: 'pair', a: x, b: y });

/** Metres east of longitude 0 on the equator, in degrees. */
const east = (metres: number): number => (metres / (6_371_008.8 * Math.PI)) * 180;

/**
 * Runs one program over a realm: changes before `start` only fill the realm; `start` creates
 * the instruction (its first evaluation), and each later change goes through the mirror and
 * the evaluator.
 */
class Harness {
  readonly mirror = new RealmMirror();
  readonly evaluator: InstructionEvaluator;
  private started = false;

  constructor(when: WhenSet) {
    this.evaluator = new InstructionEvaluator('ins-1', program(when));
  }

  start(): MembershipDelta {
    this.started = true;
    return sorted(this.evaluator.rescan(this.mirror));
  }

  put(next: TrackedObject): MembershipDelta {
    const prev = this.mirror.object(next.id);
    this.mirror.applyObject(prev, next);
    return this.started ? sorted(this.evaluator.onObjectChange(this.mirror, prev, next)) : none;
  }

  del(id: string): MembershipDelta {
    const prev = this.mirror.object(id);
    this.mirror.applyObject(prev, null);
    return this.started ? sorted(this.evaluator.onObjectChange(this.mirror, prev, null)) : none;
  }

  putArea(next: Area): MembershipDelta {
    const prev = this.mirror.area(next.id);
    this.mirror.applyArea(prev, next);
    return this.started ? sorted(this.evaluator.onAreaChange(this.mirror, prev, next)) : none;
  }

  delArea(id: string): MembershipDelta {
    const prev = this.mirror.area(id);
    this.mirror.applyArea(prev, null);
    return this.started ? sorted(this.evaluator.onAreaChange(this.mirror, prev, null)) : none;
  }

  get set(): string[] {
    return [...this.evaluator.entries].sort();
  }
}

function sorted(delta: MembershipDelta): MembershipDelta {
  return { joined: [...delta.joined].sort(), left: [...delta.left].sort() };
}
const none: MembershipDelta = { joined: [], left: [] };
const joined = (...keys: string[]): MembershipDelta => ({ joined: keys.sort(), left: [] });
const left = (...keys: string[]): MembershipDelta => ({ joined: [], left: keys.sort() });

// --- examples -------------------------------------------------------------------------------

describe('instruction evaluation: objects', () => {
  it('a quoted "true" matches the boolean and the string (troublemaker example); != matches neither', () => {
    const h = new Harness({ kind: 'objects', filter: [is('troublemaker', '=', 'true')] });
    h.put(obj('bool', null, { troublemaker: true }));
    h.put(obj('text', null, { troublemaker: 'true' }));
    h.put(obj('no', null, { troublemaker: false }));
    assert.deepEqual(h.start(), joined(o('bool'), o('text')));
    assert.deepEqual(h.put(obj('no', null, { troublemaker: true })), joined(o('no')));
    assert.deepEqual(h.put(obj('bool', null, {})), left(o('bool')));
    assert.deepEqual(h.del('text'), left(o('text')));

    const not = new Harness({ kind: 'objects', filter: [is('troublemaker', '!=', 'true')] });
    not.put(obj('bool', null, { troublemaker: true }));
    not.put(obj('text', null, { troublemaker: 'true' }));
    not.put(obj('other', null, { troublemaker: false }));
    not.put(obj('missing', null, {}));
    assert.deepEqual(not.start(), joined(o('other'), o('missing')));
  });

  it('a bare true matches only the boolean; numbers never match strings (filter rules)', () => {
    const h = new Harness({ kind: 'objects', filter: [is('flag', '=', lit(true)), is('n', '>=', 5)] });
    h.put(obj('x', null, { flag: true, n: 5 }));
    h.put(obj('y', null, { flag: 'true', n: 5 }));
    h.put(obj('z', null, { flag: true, n: '7' }));
    assert.deepEqual(h.start(), joined(o('x')));
  });

  it('$id is the id and $label the label; other names are data properties', () => {
    const h = new Harness({ kind: 'objects', filter: [is('$id', '=', 'car-1'), is('$label', '!=', null)] });
    h.put(obj('car-1', null, {}, 'Car'));
    h.put(obj('car-2', null, { $id: 'car-1' }, 'Car'));
    assert.deepEqual(h.start(), joined(o('car-1')));
    assert.deepEqual(h.put(obj('car-1', null, {}, null)), left(o('car-1')));
  });

  it('an entry that stays triggers nothing; a change before the first rescan starts with one', () => {
    const mirror = new RealmMirror([obj('w', null, { type: 'van' })]);
    const evaluator = new InstructionEvaluator('ins-1', program({ kind: 'objects', filter: [is('type', '=', 'van')] }));
    const v = obj('v', null, { type: 'van' });
    mirror.applyObject(null, v);
    assert.deepEqual(sorted(evaluator.onObjectChange(mirror, null, v)), joined(o('v'), o('w')));
    const moved = obj('v', at(1, 1), { type: 'van', x: 1 });
    mirror.applyObject(v, moved);
    assert.deepEqual(evaluator.onObjectChange(mirror, v, moved), none);
  });
});

describe('instruction evaluation: within pairs', () => {
  const when: WhenSet = {
    kind: 'pairs',
    filter: [is('type', '=', 'vehicle')],
    radius: 100,
    partner: [is('type', '=', 'bridge'), is('minClearance', '<', thisGet('maxClearance'))],
  };

  it('pairs (input, partner) with this(): bridges within 100 m lower than the vehicle', () => {
    const h = new Harness(when);
    h.start();
    assert.deepEqual(h.put(obj('low', at(east(50), 0), { type: 'bridge', minClearance: 3 })), none);
    assert.deepEqual(h.put(obj('high', at(east(60), 0), { type: 'bridge', minClearance: 5 })), none);
    assert.deepEqual(h.put(obj('truck', at(0, 0), { type: 'vehicle', maxClearance: 4 })), joined(p('truck', 'low')));
    // The truck grows: the high bridge is now too low as well.
    assert.deepEqual(h.put(obj('truck', at(0, 0), { type: 'vehicle', maxClearance: 6 })), joined(p('truck', 'high')));
    // The low bridge moves away (as partner), then the truck moves next to it (as input).
    assert.deepEqual(h.put(obj('low', at(east(500), 0), { type: 'bridge', minClearance: 3 })), left(p('truck', 'low')));
    assert.deepEqual(h.put(obj('truck', at(east(450), 0), { type: 'vehicle', maxClearance: 6 })), {
      joined: [p('truck', 'low')],
      left: [p('truck', 'high')],
    });
    // A vehicle without the field compares with nothing: no pair.
    assert.deepEqual(h.put(obj('cart', at(east(460), 0), { type: 'vehicle' })), none);
    assert.deepEqual(h.del('low'), left(p('truck', 'low')));
    assert.deepEqual(h.set, []);
  });

  it('ordered, no self pairs, radius inclusive', () => {
    const h = new Harness({ kind: 'pairs', filter: [], radius: 100, partner: [] });
    h.put(obj('a', at(0, 0)));
    h.put(obj('b', at(east(100), 0)));
    h.put(obj('c', at(east(200.01), 0)));
    // 100 m apart pair both ways; 100.01 m apart do not.
    assert.deepEqual(h.start(), joined(p('a', 'b'), p('b', 'a')));
    assert.deepEqual(h.put(obj('c', at(east(200), 0))), joined(p('b', 'c'), p('c', 'b')));
    assert.deepEqual(h.put(obj('b', null)), left(p('a', 'b'), p('b', 'a'), p('b', 'c'), p('c', 'b')));
  });
});

describe('realm mirror', () => {
  it('finds objects near a point across the antimeridian, and areas at a point, as they change', () => {
    const mirror = new RealmMirror([obj('w', at(179.9995, 0)), obj('e', at(-179.9995, 0)), obj('far', at(10, 10)), obj('nowhere', null)]);
    const near = (lon: number, lat: number, r: number): string[] => {
      const ids: string[] = [];
      mirror.visitNear(lon, lat, r, (found) => void ids.push(found.id));
      return ids.sort();
    };
    assert.deepEqual(near(180, 0, 100), ['e', 'w']);
    mirror.applyObject(mirror.object('e'), obj('e', at(-179, 0)));
    assert.deepEqual(near(180, 0, 100), ['w']);
    mirror.applyObject(mirror.object('w'), null);
    assert.deepEqual(near(180, 0, 100), []);
    mirror.applyArea(null, area('z', { w: 9, s: 9, e: 11, n: 11 }));
    assert.deepEqual(mirror.areasContaining(10, 10).map((found) => found.id), ['z']);
    mirror.applyArea(mirror.area('z'), area('z', { w: 0, s: 0, e: 1, n: 1 }));
    assert.deepEqual(mirror.areasContaining(10, 10), []);
    const inside: string[] = [];
    mirror.visitInside({ cx: 10, cy: 10, r: 1 }, (found) => void inside.push(found.id));
    assert.deepEqual(inside, ['far']);
  });
});

describe('instruction evaluation: areas', () => {
  const square = (w: number, s: number, size: number): Shape => ({ w, s, e: w + size, n: s + size });

  it('area(<c>) follows the area data', () => {
    const h = new Harness({ kind: 'areas', filter: [is('kind', '=', 'depot')] });
    h.start();
    assert.deepEqual(h.putArea(area('d', square(0, 0, 1), { kind: 'depot' })), joined(a('d')));
    assert.deepEqual(h.putArea(area('d', square(0, 0, 2), { kind: 'depot' })), none);
    assert.deepEqual(h.delArea('d'), left(a('d')));
  });

  it('area().containing(type=scooter): joins with its first scooter, stays while one is inside, leaves with the last', () => {
    const h = new Harness({ kind: 'areasContaining', filter: [], objects: [is('type', '=', 'scooter')] });
    h.putArea(area('zone', square(0, 0, 1)));
    h.putArea(area('other', square(5, 5, 1)));
    assert.deepEqual(h.start(), none);
    assert.deepEqual(h.put(obj('s1', at(0.5, 0.5), { type: 'scooter' })), joined(a('zone')));
    assert.deepEqual(h.put(obj('s2', at(0.6, 0.6), { type: 'scooter' })), none);
    assert.deepEqual(h.put(obj('car', at(5.5, 5.5), { type: 'car' })), none);
    assert.deepEqual(h.put(obj('s1', at(5.5, 5.5), { type: 'scooter' })), joined(a('other')));
    assert.deepEqual(h.put(obj('s2', at(0.6, 0.6), { type: 'bike' })), left(a('zone')));
    // The area moves over the car and the scooter: it holds one again.
    assert.deepEqual(h.putArea(area('zone', square(5, 5, 2))), joined(a('zone')));
    assert.deepEqual(h.del('s1'), left(a('zone'), a('other')));
  });

  it('object().inside(<area c>) (locus extension): objects inside at least one matching area', () => {
    const h = new Harness({ kind: 'objectsInside', filter: [is('type', '=', 'van')], areas: [is('kind', '=', 'depot')] });
    h.putArea(area('d1', square(0, 0, 1), { kind: 'depot' }));
    h.putArea(area('d2', square(0.5, 0.5, 1), { kind: 'depot' }));
    h.put(obj('v', at(0.7, 0.7), { type: 'van' }));
    h.put(obj('c', at(0.7, 0.7), { type: 'car' }));
    assert.deepEqual(h.start(), joined(o('v')));
    assert.deepEqual(h.delArea('d1'), none);
    assert.deepEqual(h.putArea(area('d2', square(0.5, 0.5, 1), { kind: 'shop' })), left(o('v')));
    assert.deepEqual(h.putArea(area('d3', { cx: 0.7, cy: 0.7, r: 10 }, { kind: 'depot' })), joined(o('v')));
    assert.deepEqual(h.put(obj('v', null, { type: 'van' })), left(o('v')));
  });
});

describe('instruction evaluation: aggregates', () => {
  it('<, > compare with the average of the numbers; = with any of the values, != with none', () => {
    const sensors = new Harness({
      kind: 'objects',
      filter: [is('type', '=', 'sensor'), is('value', '<', aggregate([is('type', '=', 'dial')], 'value'))],
    });
    sensors.put(obj('d1', null, { type: 'dial', value: 10 }));
    sensors.put(obj('d2', null, { type: 'dial', value: 20 }));
    sensors.put(obj('d3', null, { type: 'dial', value: 'n/a' }));
    sensors.put(obj('s1', null, { type: 'sensor', value: 14 }));
    sensors.put(obj('s2', null, { type: 'sensor', value: 16 }));
    assert.deepEqual(sensors.start(), joined(o('s1')));
    // A dial's change moves the average (10 + 30) / 2 = 20 and with it every sensor.
    assert.deepEqual(sensors.put(obj('d2', null, { type: 'dial', value: 30 })), joined(o('s2')));
    // No dial left: nothing to compare with.
    sensors.del('d1');
    sensors.del('d3');
    assert.deepEqual(sensors.del('d2'), left(o('s1'), o('s2')));

    const sameColour = new Harness({ kind: 'objects', filter: [is('colour', '=', aggregate([is('type', '=', 'flag')], 'colour'))] });
    const otherColour = new Harness({ kind: 'objects', filter: [is('colour', '!=', aggregate([is('type', '=', 'flag')], 'colour'))] });
    for (const h of [sameColour, otherColour]) {
      h.put(obj('f1', null, { type: 'flag', colour: 'red' }));
      h.put(obj('f2', null, { type: 'flag', colour: 'blue' }));
      h.put(obj('x', null, { colour: 'blue' }));
      h.put(obj('y', null, { colour: 'green' }));
      h.put(obj('z', null, {}));
    }
    assert.deepEqual(sameColour.start(), joined(o('f1'), o('f2'), o('x')));
    assert.deepEqual(otherColour.start(), joined(o('y'), o('z')));
  });
});

describe('instruction evaluation: load and repair', () => {
  it('a loaded set is repaired by the rescan: only the differences fire', () => {
    const h = new Harness({ kind: 'objects', filter: [is('type', '=', 'van')] });
    h.put(obj('v1', null, { type: 'van' }));
    h.put(obj('v2', null, { type: 'van' }));
    h.evaluator.load([o('v1'), o('gone')]);
    assert.deepEqual(h.start(), { joined: [o('v2')], left: [o('gone')] });
    assert.deepEqual(h.start(), none);
  });
});

describe('instruction index', () => {
  it('returns the instructions filed under the old or new value, and those without an equality', () => {
    const index = new InstructionIndex();
    const van = new InstructionEvaluator('van', program({ kind: 'objects', filter: [is('type', '=', 'van')] }));
    const flagged = new InstructionEvaluator('flag', program({ kind: 'objects', filter: [is('flag', '=', 'true')] }));
    const cheap = new InstructionEvaluator('cheap', program({ kind: 'objects', filter: [is('price', '<', 5)] }));
    const depots = new InstructionEvaluator('depots', program({ kind: 'areasContaining', filter: [is('kind', '=', 'depot')], objects: [is('type', '=', 'bike')] }));
    for (const ev of [van, flagged, cheap, depots]) index.add(ev);
    const ids = (evs: InstructionEvaluator[]): string[] => evs.map((ev) => ev.id).sort();
    assert.deepEqual(ids(index.objectChanged(null, obj('x', null, { type: 'car' }))), ['cheap']);
    assert.deepEqual(ids(index.objectChanged(obj('x', null, { type: 'van' }), obj('x', null, { type: 'car' }))), ['cheap', 'van']);
    assert.deepEqual(ids(index.objectChanged(obj('x', null, { flag: true }), null)), ['cheap', 'flag']);
    assert.deepEqual(ids(index.objectChanged(null, obj('x', null, { flag: 'true', type: 'bike' }))), ['cheap', 'depots', 'flag']);
    assert.deepEqual(ids(index.areaChanged(null, area('d', { cx: 0, cy: 0, r: 1 }, { kind: 'shop' }))), []);
    assert.deepEqual(ids(index.areaChanged(area('d', { cx: 0, cy: 0, r: 1 }, { kind: 'depot' }), null)), ['depots']);
    index.remove(cheap);
    assert.deepEqual(ids(index.objectChanged(null, obj('x', null, { type: 'van' }))), ['van']);
  });
});

// --- property test --------------------------------------------------------------------------

/** The programs of the property test: every kind, numeric and string comparisons, this(), aggregates. */
const propertyPrograms: WhenSet[] = [
  { kind: 'objects', filter: [is('type', '=', 'van'), is('charge', '<', 40)] },
  { kind: 'objects', filter: [is('flag', '=', 'true')] },
  { kind: 'objects', filter: [is('name', '>=', 'm'), is('flag', '!=', 'true')] },
  { kind: 'pairs', filter: [is('type', '=', 'van')], radius: 250, partner: [is('colour', '=', thisGet('colour'))] },
  { kind: 'pairs', filter: [], radius: 150, partner: [is('charge', '>', thisGet('charge'))] },
  { kind: 'pairs', filter: [is('charge', '<=', 50)], radius: 400, partner: [is('type', '=', 'car')] },
  { kind: 'areas', filter: [is('colour', '=', 'red')] },
  { kind: 'areasContaining', filter: [is('zone', '=', 'a')], objects: [is('type', '=', 'van')] },
  { kind: 'areasContaining', filter: [], objects: [is('charge', '>=', 50)] },
  { kind: 'objectsInside', filter: [is('type', '=', 'car')], areas: [is('colour', '=', 'red')] },
  { kind: 'objectsInside', filter: [], areas: [is('zone', '!=', 'a')] },
  { kind: 'objects', filter: [is('type', '=', 'car'), is('charge', '>', aggregate([is('type', '=', 'van')], 'charge'))] },
  { kind: 'objects', filter: [is('colour', '=', aggregate([is('type', '=', 'depot')], 'colour'))] },
  {
    kind: 'pairs',
    filter: [is('type', '=', 'car')],
    radius: 300,
    partner: [is('charge', '<', aggregate([is('type', '=', 'van')], 'charge'))],
  },
  {
    kind: 'areasContaining',
    filter: [is('zone', '=', aggregate([is('type', '=', 'depot')], 'zone'))],
    objects: [is('charge', '>', aggregate([is('colour', '=', 'red')], 'charge'))],
  },
  { kind: 'objects', filter: [is('charge', '>', aggregate([is('colour', '=', aggregate([is('type', '=', 'depot')], 'colour'))], 'charge'))] },
];

type Write =
  | { kind: 'put'; id: string; location: Location | null; data: Data }
  | { kind: 'move'; id: string; location: Location }
  | { kind: 'data'; id: string; data: Data }
  | { kind: 'delete'; id: string }
  | { kind: 'putArea'; id: string; shape: Shape; data: Data }
  | { kind: 'areaData'; id: string; data: Data }
  | { kind: 'deleteArea'; id: string }
  | { kind: 'takeover' };

/** Half a kilometre square near the origin, on a grid (ties in distance included). */
const STEP = 0.0005;
const coordinate = fc.integer({ min: 0, max: 10 }).map((i) => i * STEP);
const location = fc.tuple(coordinate, coordinate).map(([lon, lat]) => at(lon, lat));
const objectId = fc.integer({ min: 0, max: 29 }).map((i) => `o${i}`);
const areaId = fc.integer({ min: 0, max: 5 }).map((i) => `a${i}`);
const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 4 });
const objectData: fc.Arbitrary<Data> = fc
  .record({
    type: optional(fc.constantFrom('van', 'car', 'depot', 'bike')),
    charge: optional(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant('full'))),
    colour: optional(fc.constantFrom('red', 'blue')),
    flag: optional(fc.constantFrom<boolean | string>(true, false, 'true', 'false', 'yes')),
    name: optional(fc.constantFrom('alpha', 'mike', 'zulu', 'm')),
    zone: optional(fc.constantFrom('a', 'b')),
  })
  .map((data) => Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as Data);
const areaData: fc.Arbitrary<Data> = fc
  .record({ colour: optional(fc.constantFrom('red', 'blue')), zone: optional(fc.constantFrom('a', 'b')) })
  .map((data) => Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as Data);
const shape: fc.Arbitrary<Shape> = fc.oneof(
  fc.record({ cx: coordinate, cy: coordinate, r: fc.integer({ min: 20, max: 400 }) }),
  fc.tuple(coordinate, coordinate, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 })).map(([w, s, dx, dy]) => ({ w, s, e: w + dx * STEP, n: s + dy * STEP })),
  fc.tuple(location, location, location).map((corners) => ({ points: corners.map((c) => [c.longitude, c.latitude] as [number, number]) })),
);
const write: fc.Arbitrary<Write> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('put' as const), id: objectId, location: fc.option(location, { freq: 6 }), data: objectData }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('move' as const), id: objectId, location }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('data' as const), id: objectId, data: objectData }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), id: objectId }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('putArea' as const), id: areaId, shape, data: areaData }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('areaData' as const), id: areaId, data: areaData }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('deleteArea' as const), id: areaId }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'takeover' as const }), weight: 1 },
);

const RUNS = 10;
/** Entries joined and left per program over all runs: every program must see both, or the test proves little. */
const activity = propertyPrograms.map(() => ({ joined: 0, left: 0 }));
const WRITES_PER_RUN = 1000;

/** Applies the writes of one run and checks every instruction after each (throws on the first difference). */
function checkRun(writes: readonly Write[]): void {
  const mirror = new RealmMirror();
  const index = new InstructionIndex();
  let evaluators = propertyPrograms.map((when, i) => new InstructionEvaluator(`ins-${i}`, program(when)));
  for (const ev of evaluators) {
    index.add(ev);
    assert.deepEqual(ev.rescan(mirror), none);
  }
  for (const [step, w] of writes.entries()) {
    const before = evaluators.map((ev) => new Set(ev.entries));
    const deltas = new Map<InstructionEvaluator, MembershipDelta>();
    if (w.kind === 'takeover') {
      // A new holder loads the persisted sets and repairs them: nothing to fire.
      const next = evaluators.map((ev) => new InstructionEvaluator(ev.id, ev.program));
      for (const [i, ev] of next.entries()) {
        index.remove(evaluators[i] as InstructionEvaluator);
        index.add(ev);
        ev.load(evaluators[i]?.entries ?? []);
        deltas.set(ev, ev.rescan(mirror));
      }
      evaluators = next;
    } else if (w.kind === 'putArea' || w.kind === 'deleteArea' || w.kind === 'areaData') {
      const prev = mirror.area(w.id);
      let next: Area | null;
      if (w.kind === 'putArea') next = area(w.id, w.shape, w.data);
      else if (w.kind === 'deleteArea') next = null;
      // The same shape as a new value, as the store would give it.
      else if (prev === null) continue;
      else next = { ...prev, shape: structuredClone(prev.shape), data: w.data };
      for (const { evaluator, ...delta } of applyAreaChange(mirror, index, w.id, next)) deltas.set(evaluator, delta);
    } else {
      const prev = mirror.object(w.id);
      let next: TrackedObject | null;
      if (w.kind === 'put') next = obj(w.id, w.location, w.data);
      else if (w.kind === 'delete') next = null;
      else if (prev === null) continue;
      else if (w.kind === 'move') next = { ...prev, location: w.location };
      else next = { ...prev, data: w.data };
      for (const { evaluator, ...delta } of applyObjectChange(mirror, index, w.id, next)) deltas.set(evaluator, delta);
    }
    for (const [i, ev] of evaluators.entries()) {
      const expected = referenceEvaluate(ev.program, mirror);
      const was = before[i] as Set<string>;
      const delta = deltas.get(ev) ?? none;
      // then: once per entry that joined; until: once per entry that left; nothing else.
      const checks: [string, string[], string[]][] = [
        ['set', [...ev.entries], [...expected]],
        ['joined', delta.joined, [...expected].filter((k) => !was.has(k))],
        ['left', delta.left, [...was].filter((k) => !expected.has(k))],
      ];
      for (const [what, actual, wanted] of checks) {
        actual.sort();
        wanted.sort();
        if (isDeepStrictEqual(actual, wanted)) continue;
        const where = `write ${step} (${JSON.stringify(w)}), instruction ${i} ${JSON.stringify(propertyPrograms[i])}`;
        assert.deepEqual(actual, wanted, `${what} differs from the reference evaluator's after ${where}`);
      }
      (activity[i] as { joined: number; left: number }).joined += delta.joined.length;
      (activity[i] as { joined: number; left: number }).left += delta.left.length;
    }
  }
  for (const ev of evaluators) assert.deepEqual(ev.rescan(mirror), none);
}

describe('instruction evaluation: property', () => {
  it(`${RUNS * WRITES_PER_RUN} random writes: every set equals the reference evaluator's, joined/left are exactly the differences`, () => {
    let writes = 0;
    fc.assert(
      fc.property(fc.array(write, { minLength: WRITES_PER_RUN, maxLength: WRITES_PER_RUN }), (run) => {
        checkRun(run);
        writes += run.length;
      }),
      { numRuns: RUNS, seed: Number(process.env.LOCUS_PROPERTY_SEED ?? 31), endOnFailure: true },
    );
    assert.equal(writes, RUNS * WRITES_PER_RUN);
    for (const [i, { joined, left }] of activity.entries()) {
      assert.ok(joined >= 50 && left >= 50, `program ${i} saw ${joined} entries join and ${left} leave: too few to test it`);
    }
  });
});
