/**
 * One instruction's `when` set, kept current change by change (docs/instructions.md,
 * "Evaluation rules"). The evaluator holds the set's entry keys (language/ast.ts entryKey) and
 * answers each change with the keys that joined and left, having applied them to its own set;
 * the caller persists them and runs `then`/`until`. The mirror must already hold the change.
 *
 * A change costs what it touches: an object kind looks at the object; pairs (`within`) at the
 * object's member pairs and the objects within the radius of its new location (as input and as
 * partner); areas containing objects at the areas the object is (was) a witness of and those
 * at its new location, keeping per area the matching objects inside; objects inside areas at
 * the object and the areas at its location, and on an area's change at the objects within its
 * old and new shape. A program with aggregates is evaluated again over the realm (rescan)
 * whenever an object's change may change an aggregate, since an aggregate may move every entry.
 *
 * `rescan` evaluates the whole set and answers the differences from the set held: it runs at
 * creation, after `load` (takeover, restart), periodically and on `every` ticks; a change that
 * arrives before the first rescan starts with one. Pure: no I/O.
 */
import type { Area, Location, TrackedObject } from '../../domain/types.js';
import type { FilterSubject } from '../../domain/filter.js';
import { entryKey, entryOfKey, type Program, type WhenSet } from '../language/ast.js';
import {
  aggregatesOf,
  computeAggregates,
  contribution,
  hasNestedAggregate,
  matcherOf,
  type AggregateExpr,
  type AggregateValue,
  type ConditionMatcher,
  type MatchContext,
} from './conditions.js';
import { sameShape, withinRadius, type RealmMirror } from './realm-mirror.js';

/** Entry keys that joined and left the set with one evaluation (each key at most once, in one of them). */
export interface MembershipDelta {
  joined: string[];
  left: string[];
}

const objectKey = (id: string): string => entryKey({ kind: 'object', id });
const areaKey = (id: string): string => entryKey({ kind: 'area', id });
const pairKey = (a: string, b: string): string => entryKey({ kind: 'pair', a, b });

/** The object ids an entry key names (none for an area). */
function objectIdsOf(key: string): string[] {
  const entry = entryOfKey(key);
  if (entry.kind === 'object') return [entry.id];
  if (entry.kind === 'pair') return [entry.a, entry.b];
  return [];
}

/** The matchers of a `when` set, compiled once. */
interface Matchers {
  /** The main filter: objects (objects, pairs' inputs, objectsInside) or areas (areas, areasContaining). */
  filter: ConditionMatcher;
  /** The second list: pairs' partners, areasContaining's objects, objectsInside's areas. */
  other: ConditionMatcher | null;
}

function matchersOf(when: WhenSet): Matchers {
  const filter = matcherOf(when.filter);
  switch (when.kind) {
    case 'objects':
    case 'areas':
      return { filter, other: null };
    case 'pairs':
      return { filter, other: matcherOf(when.partner) };
    case 'areasContaining':
      return { filter, other: matcherOf(when.objects) };
    case 'objectsInside':
      return { filter, other: matcherOf(when.areas) };
  }
}

const located = (obj: TrackedObject | null): Location | null => obj?.location ?? null;

export class InstructionEvaluator {
  private readonly members = new Set<string>();
  /** Object id → the member keys naming it. */
  private readonly byObject = new Map<string, Set<string>>();
  private readonly aggregateExprs: AggregateExpr[];
  private readonly nestedAggregates: boolean;
  private aggregates: Map<AggregateExpr, AggregateValue> = new Map();
  private readonly match: Matchers;
  /** areasContaining: per area matching the filter, the matching objects inside it. */
  private readonly witnesses = new Map<string, Set<string>>();
  /** areasContaining: object id → the areas it is a witness of. */
  private readonly witnessOf = new Map<string, Set<string>>();
  private ready = false;

  constructor(
    readonly id: string,
    readonly program: Program,
  ) {
    this.aggregateExprs = aggregatesOf(program);
    this.nestedAggregates = hasNestedAggregate(this.aggregateExprs);
    this.match = matchersOf(program.when);
  }

  /** The entry keys in the set now. */
  get entries(): ReadonlySet<string> {
    return this.members;
  }

  /** Takes the set as persisted; the next evaluation is a rescan, which repairs what changed meanwhile. */
  load(keys: Iterable<string>): void {
    this.members.clear();
    this.byObject.clear();
    for (const key of keys) this.add(key);
    this.ready = false;
  }

  /** Evaluates the whole set over the realm and answers the differences from the set held. */
  rescan(mirror: RealmMirror): MembershipDelta {
    this.aggregates = computeAggregates(this.aggregateExprs, mirror.objects.values());
    const now = this.evaluateAll(mirror);
    const delta: MembershipDelta = { joined: [], left: [] };
    for (const key of this.members) if (!now.has(key)) delta.left.push(key);
    for (const key of delta.left) this.remove(key);
    for (const key of now) {
      if (this.members.has(key)) continue;
      this.add(key);
      delta.joined.push(key);
    }
    this.ready = true;
    return delta;
  }

  /** An object was created (`prev` null), changed or deleted (`next` null). */
  onObjectChange(mirror: RealmMirror, prev: TrackedObject | null, next: TrackedObject | null): MembershipDelta {
    if (!this.ready || this.aggregatesMayChange(prev, next)) return this.rescan(mirror);
    const delta: MembershipDelta = { joined: [], left: [] };
    const id = next?.id ?? prev?.id;
    if (id === undefined) return delta;
    switch (this.program.when.kind) {
      case 'objects':
        this.set(objectKey(id), next !== null && this.match.filter.matches(next, this.ctx(null)), delta);
        break;
      case 'pairs':
        this.pairsOnObject(mirror, id, next, this.program.when.radius, delta);
        break;
      case 'areasContaining':
        this.witnessesOnObject(mirror, id, next, delta);
        break;
      case 'objectsInside':
        this.set(objectKey(id), this.insideSomeArea(mirror, next), delta);
        break;
      case 'areas':
        break;
    }
    return delta;
  }

  /** An area was created (`prev` null), changed or deleted (`next` null). */
  onAreaChange(mirror: RealmMirror, prev: Area | null, next: Area | null): MembershipDelta {
    if (!this.ready) return this.rescan(mirror);
    const delta: MembershipDelta = { joined: [], left: [] };
    const id = next?.id ?? prev?.id;
    if (id === undefined || this.sameAreaRole(prev, next)) return delta;
    switch (this.program.when.kind) {
      case 'areas':
        this.set(areaKey(id), next !== null && this.match.filter.matches(next, this.ctx(null)), delta);
        break;
      case 'areasContaining':
        this.witnessesOnArea(mirror, id, next, delta);
        break;
      case 'objectsInside': {
        const seen = new Set<string>();
        const recheck = (obj: TrackedObject): void => {
          if (seen.has(obj.id)) return;
          seen.add(obj.id);
          this.set(objectKey(obj.id), this.insideSomeArea(mirror, obj), delta);
        };
        if (prev !== null) mirror.visitInside(prev.shape, recheck);
        if (next !== null) mirror.visitInside(next.shape, recheck);
        break;
      }
      case 'objects':
      case 'pairs':
        break;
    }
    return delta;
  }

  /**
   * True when an area kept its shape and its verdict under the conditions it meets: then no
   * object's relation to it changed (an instruction's own `set()` on the area is such a write).
   */
  private sameAreaRole(prev: Area | null, next: Area | null): boolean {
    if (prev === null || next === null || !sameShape(prev.shape, next.shape)) return false;
    const kind = this.program.when.kind;
    const conditions = kind === 'objectsInside' ? this.match.other : kind === 'areasContaining' || kind === 'areas' ? this.match.filter : null;
    if (conditions === null) return true;
    const plain = this.ctx(null);
    return conditions.matches(prev, plain) === conditions.matches(next, plain);
  }

  // --- whole set ------------------------------------------------------------------------

  private evaluateAll(mirror: RealmMirror): Set<string> {
    const out = new Set<string>();
    const { filter, other } = this.match;
    const when = this.program.when;
    const plain = this.ctx(null);
    switch (when.kind) {
      case 'objects':
        for (const obj of mirror.objects.values()) if (filter.matches(obj, plain)) out.add(objectKey(obj.id));
        break;
      case 'areas':
        for (const area of mirror.areas.values()) if (filter.matches(area, plain)) out.add(areaKey(area.id));
        break;
      case 'pairs':
        for (const input of mirror.objects.values()) {
          const at = input.location;
          if (at === null || !filter.matches(input, plain)) continue;
          const withSelf = this.ctx(input);
          mirror.visitNear(at.longitude, at.latitude, when.radius, (partner) => {
            if (partner.id !== input.id && (other as ConditionMatcher).matches(partner, withSelf)) out.add(pairKey(input.id, partner.id));
          });
        }
        break;
      case 'areasContaining':
        this.witnesses.clear();
        this.witnessOf.clear();
        for (const area of mirror.areas.values()) {
          if (!filter.matches(area, plain)) continue;
          this.witnesses.set(area.id, new Set());
          mirror.visitInside(area.shape, (obj) => {
            if ((other as ConditionMatcher).matches(obj, plain)) this.witness(obj.id, area.id);
          });
          if ((this.witnesses.get(area.id) as Set<string>).size > 0) out.add(areaKey(area.id));
        }
        break;
      case 'objectsInside':
        for (const obj of mirror.objects.values()) if (this.insideSomeArea(mirror, obj)) out.add(objectKey(obj.id));
        break;
    }
    return out;
  }

  // --- per change -----------------------------------------------------------------------

  private pairsOnObject(mirror: RealmMirror, id: string, next: TrackedObject | null, radius: number, delta: MembershipDelta): void {
    const held = this.byObject.get(id);
    if (held !== undefined) {
      for (const key of [...held]) {
        const entry = entryOfKey(key);
        if (entry.kind === 'pair' && !this.pairHolds(mirror, entry.a, entry.b, radius)) this.set(key, false, delta);
      }
    }
    const at = located(next);
    if (next === null || at === null) return;
    const partners = this.match.other as ConditionMatcher;
    const plain = this.ctx(null);
    const withSelf = this.match.filter.matches(next, plain) ? this.ctx(next) : null;
    // One look around the new location finds the object's pairs in both roles.
    mirror.visitNear(at.longitude, at.latitude, radius, (other) => {
      if (other.id === id) return;
      if (withSelf !== null && partners.matches(other, withSelf)) this.set(pairKey(id, other.id), true, delta);
      const from = other.location;
      if (from !== null && this.match.filter.matches(other, plain) && withinRadius(from, at, radius) && partners.matches(next, this.ctx(other))) {
        this.set(pairKey(other.id, id), true, delta);
      }
    });
  }

  /** The pair decision of the `when` set: ordered (input, partner), no self pair, inclusive radius. */
  private pairHolds(mirror: RealmMirror, a: string, b: string, radius: number): boolean {
    const input = mirror.object(a);
    const partner = mirror.object(b);
    if (a === b || input === null || partner === null || input.location === null || partner.location === null) return false;
    return (
      this.match.filter.matches(input, this.ctx(null)) &&
      withinRadius(input.location, partner.location, radius) &&
      (this.match.other as ConditionMatcher).matches(partner, this.ctx(input))
    );
  }

  private witnessesOnObject(mirror: RealmMirror, id: string, next: TrackedObject | null, delta: MembershipDelta): void {
    const touched = new Set(this.witnessOf.get(id));
    for (const areaId of touched) this.unwitness(id, areaId);
    const at = located(next);
    if (next !== null && at !== null && (this.match.other as ConditionMatcher).matches(next, this.ctx(null))) {
      for (const area of mirror.areasContaining(at.longitude, at.latitude)) {
        if (!this.witnesses.has(area.id)) continue;
        this.witness(id, area.id);
        touched.add(area.id);
      }
    }
    for (const areaId of touched) this.set(areaKey(areaId), (this.witnesses.get(areaId)?.size ?? 0) > 0, delta);
  }

  private witnessesOnArea(mirror: RealmMirror, id: string, next: Area | null, delta: MembershipDelta): void {
    const held = this.witnesses.get(id);
    if (held !== undefined) for (const objectId of [...held]) this.unwitness(objectId, id);
    this.witnesses.delete(id);
    if (next !== null && this.match.filter.matches(next, this.ctx(null))) {
      this.witnesses.set(id, new Set());
      const objects = this.match.other as ConditionMatcher;
      const plain = this.ctx(null);
      mirror.visitInside(next.shape, (obj) => {
        if (objects.matches(obj, plain)) this.witness(obj.id, id);
      });
    }
    this.set(areaKey(id), (this.witnesses.get(id)?.size ?? 0) > 0, delta);
  }

  private witness(objectId: string, areaId: string): void {
    (this.witnesses.get(areaId) as Set<string>).add(objectId);
    let areas = this.witnessOf.get(objectId);
    if (areas === undefined) {
      areas = new Set();
      this.witnessOf.set(objectId, areas);
    }
    areas.add(areaId);
  }

  private unwitness(objectId: string, areaId: string): void {
    this.witnesses.get(areaId)?.delete(objectId);
    const areas = this.witnessOf.get(objectId);
    if (areas === undefined) return;
    areas.delete(areaId);
    if (areas.size === 0) this.witnessOf.delete(objectId);
  }

  /** objectsInside: the object matches and lies in at least one matching area. */
  private insideSomeArea(mirror: RealmMirror, obj: TrackedObject | null): boolean {
    const at = located(obj);
    if (obj === null || at === null) return false;
    const plain = this.ctx(null);
    if (!this.match.filter.matches(obj, plain)) return false;
    const areas = this.match.other as ConditionMatcher;
    return mirror.areasContaining(at.longitude, at.latitude).some((area) => areas.matches(area, plain));
  }

  /** True when the change may alter an aggregate (then every entry may move). */
  private aggregatesMayChange(prev: TrackedObject | null, next: TrackedObject | null): boolean {
    if (this.aggregateExprs.length === 0) return false;
    if (this.nestedAggregates) return true;
    return this.aggregateExprs.some((expr) => contribution(expr, prev, this.aggregates) !== contribution(expr, next, this.aggregates));
  }

  // --- membership -----------------------------------------------------------------------

  private ctx(self: FilterSubject | null): MatchContext {
    return { aggregates: this.aggregates, self };
  }

  /** Puts the key in or out of the set, recording the change in the delta. */
  private set(key: string, inSet: boolean, delta: MembershipDelta): void {
    if (inSet === this.members.has(key)) return;
    if (inSet) {
      this.add(key);
      delta.joined.push(key);
    } else {
      this.remove(key);
      delta.left.push(key);
    }
  }

  private add(key: string): void {
    this.members.add(key);
    for (const id of objectIdsOf(key)) {
      let keys = this.byObject.get(id);
      if (keys === undefined) {
        keys = new Set();
        this.byObject.set(id, keys);
      }
      keys.add(key);
    }
  }

  private remove(key: string): void {
    this.members.delete(key);
    for (const id of objectIdsOf(key)) {
      const keys = this.byObject.get(id);
      if (keys === undefined) continue;
      keys.delete(key);
      if (keys.size === 0) this.byObject.delete(id);
    }
  }
}
