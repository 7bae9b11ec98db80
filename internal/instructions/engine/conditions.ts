/**
 * What a comparison of a checked program means (hivescript.md 9.3; docs/instructions.md,
 * "Evaluation rules"): the v1 filter rules of domain/filter.ts (matchesFilter decides every
 * literal comparison), with one addition, and the rules for the two computed values.
 *
 * - A quoted string also matches a boolean of the same spelling: `troublemaker="true"` holds
 *   for `true` and for `"true"`, and `!=` holds for neither.
 * - `$id` is the id, `$label` the label; any other name is a data property.
 * - `this().get(f)` is the input object's value of `f`; with none (missing, or a nested value)
 *   the comparison is false.
 * - An aggregate `object(<of>).get(f)` stands for the values of `f` over the objects matching
 *   `<of>` (missing and nested values left out). `<`, `>`, `<=`, `>=` compare with the average of
 *   its numbers; `=` holds when the field equals one of the values, `!=` when it equals none.
 *   An aggregate with no values (no numbers, for the orders) makes the comparison false.
 * Pure: no I/O.
 */
import { isNested } from '../../domain/data.js';
import { fieldValue, matchesFilter, type FilterSubject } from '../../domain/filter.js';
import type { FilterCondition, ScalarValue, TrackedObject } from '../../domain/types.js';
import type { Condition, Program, ValueExpr, WhenSet } from '../language/ast.js';

export type AggregateExpr = Extract<ValueExpr, { kind: 'aggregate' }>;

/** An aggregate's values over the realm, as comparisons use them. */
export interface AggregateValue {
  /** The distinct scalar values (a missing label counts as null). */
  values: ReadonlySet<ScalarValue>;
  /** The average of the numbers; null when there is none. */
  average: number | null;
}

export type AggregateValues = ReadonlyMap<AggregateExpr, AggregateValue>;

/** What a comparison may read besides its subject. */
export interface MatchContext {
  aggregates: AggregateValues;
  /** `this()`: the input object of a `within` pair; null elsewhere. */
  self: FilterSubject | null;
}

/** The field a condition names, as domain/filter.ts reads it. */
export interface FieldRef {
  field: string;
  target: 'data' | undefined;
}

export function fieldRef(name: string): FieldRef {
  if (name === '$id') return { field: 'id', target: undefined };
  if (name === '$label') return { field: 'label', target: undefined };
  return { field: name, target: 'data' };
}

/** The boolean a quoted string spells, if any. */
function spelledBoolean(value: ScalarValue, quoted: boolean): boolean | null {
  if (!quoted) return null;
  return value === 'true' ? true : value === 'false' ? false : null;
}

/** The values a literal equality accepts (two for a quoted boolean spelling); null for other conditions. */
export function equalityValues(condition: Condition): ScalarValue[] | null {
  const { op, value } = condition;
  if (op !== '=' || value.kind !== 'literal' || value.value === null) return null;
  const alias = spelledBoolean(value.value, value.quoted);
  return alias === null ? [value.value] : [value.value, alias];
}

type Test = (subject: FilterSubject, ctx: MatchContext) => boolean;

function aggregateTest(ref: FieldRef, op: Condition['op'], expr: AggregateExpr): Test {
  if (op === '=' || op === '!=') {
    const wanted = op === '=';
    return (subject, ctx) => {
      const aggregate = ctx.aggregates.get(expr);
      if (aggregate === undefined || aggregate.values.size === 0) return false;
      const actual = fieldValue(subject, ref.field, ref.target);
      // The filter's equality, over every value at once: `= null` holds for a missing field.
      const equal = !isNested(actual) && aggregate.values.has(actual ?? null);
      return equal === wanted;
    };
  }
  // One condition object per test, its value set before each use (no allocation per subject).
  const probe: FilterCondition = { ...ref, op, value: null };
  const probes = [probe];
  return (subject, ctx) => {
    const average = ctx.aggregates.get(expr)?.average ?? null;
    if (average === null) return false;
    probe.value = average;
    return matchesFilter(subject, probes);
  };
}

function thisTest(ref: FieldRef, op: Condition['op'], self: FieldRef): Test {
  const probe: FilterCondition = { ...ref, op, value: null };
  const probes = [probe];
  return (subject, ctx) => {
    if (ctx.self === null) return false;
    const value = fieldValue(ctx.self, self.field, self.target);
    if (value === undefined || isNested(value)) return false;
    probe.value = value;
    return matchesFilter(subject, probes);
  };
}

/** A condition list compiled once: the literal comparisons go to matchesFilter in one call. */
export class ConditionMatcher {
  private readonly plain: FilterCondition[] = [];
  private readonly tests: Test[] = [];

  constructor(conditions: readonly Condition[]) {
    for (const condition of conditions) {
      const ref = fieldRef(condition.field);
      const { op, value } = condition;
      if (value.kind === 'aggregate') this.tests.push(aggregateTest(ref, op, value));
      else if (value.kind === 'this') this.tests.push(thisTest(ref, op, fieldRef(value.field)));
      else {
        const alias = op === '=' || op === '!=' ? spelledBoolean(value.value, value.quoted) : null;
        this.plain.push({ ...ref, op, value: value.value });
        if (alias !== null && op === '!=') this.plain.push({ ...ref, op, value: alias });
        if (alias !== null && op === '=') {
          // Either spelling: the string condition already in `plain` becomes this alternative.
          const asString = this.plain.pop() as FilterCondition;
          const asBoolean: FilterCondition = { ...ref, op, value: alias };
          this.tests.push((subject) => matchesFilter(subject, [asString]) || matchesFilter(subject, [asBoolean]));
        }
      }
    }
  }

  matches(subject: FilterSubject, ctx: MatchContext): boolean {
    if (this.plain.length > 0 && !matchesFilter(subject, this.plain)) return false;
    for (const test of this.tests) if (!test(subject, ctx)) return false;
    return true;
  }
}

const compiled = new WeakMap<readonly Condition[], ConditionMatcher>();

/** The compiled matcher of a condition list (kept for as long as the list lives). */
export function matcherOf(conditions: readonly Condition[]): ConditionMatcher {
  let matcher = compiled.get(conditions);
  if (matcher === undefined) {
    matcher = new ConditionMatcher(conditions);
    compiled.set(conditions, matcher);
  }
  return matcher;
}

/** The condition lists of a `when` set. */
export function conditionLists(when: WhenSet): (readonly Condition[])[] {
  switch (when.kind) {
    case 'objects':
    case 'areas':
      return [when.filter];
    case 'pairs':
      return [when.filter, when.partner];
    case 'areasContaining':
      return [when.filter, when.objects];
    case 'objectsInside':
      return [when.filter, when.areas];
  }
}

/** Every aggregate of the program, inner ones before the aggregates whose conditions use them. */
export function aggregatesOf(program: Program): AggregateExpr[] {
  const out: AggregateExpr[] = [];
  const visit = (conditions: readonly Condition[]): void => {
    for (const { value } of conditions) {
      if (value.kind !== 'aggregate') continue;
      visit(value.of);
      out.push(value);
    }
  };
  for (const list of conditionLists(program.when)) visit(list);
  return out;
}

/** True when some aggregate's conditions hold an aggregate themselves. */
export function hasNestedAggregate(aggregates: readonly AggregateExpr[]): boolean {
  return aggregates.some((expr) => expr.of.some((condition) => condition.value.kind === 'aggregate'));
}

/** What one object adds to an aggregate: its value of the field when it matches; undefined when it adds nothing. */
export function contribution(expr: AggregateExpr, obj: TrackedObject | null, aggregates: AggregateValues): ScalarValue | undefined {
  if (obj === null || !matcherOf(expr.of).matches(obj, { aggregates, self: null })) return undefined;
  const ref = fieldRef(expr.field);
  const value = fieldValue(obj, ref.field, ref.target);
  return value === undefined || isNested(value) ? undefined : value;
}

/** The program's aggregates over these objects, computed in order (inner ones first). */
export function computeAggregates(aggregates: readonly AggregateExpr[], objects: Iterable<TrackedObject>): Map<AggregateExpr, AggregateValue> {
  const out = new Map<AggregateExpr, AggregateValue>();
  if (aggregates.length === 0) return out;
  const all = [...objects];
  for (const expr of aggregates) {
    const values = new Set<ScalarValue>();
    let sum = 0;
    let count = 0;
    for (const obj of all) {
      const value = contribution(expr, obj, out);
      if (value === undefined) continue;
      values.add(value);
      if (typeof value === 'number') {
        sum += value;
        count++;
      }
    }
    out.set(expr, { values, average: count === 0 ? null : sum / count });
  }
  return out;
}
