/**
 * Which instructions a change can affect, found without looking at the others: each
 * instruction is filed under an equality condition (`type="van"`, `$id="x"`) of every condition
 * list that the change's kind of record can meet, and found by the value the changed record
 * had or has for that field; a list with no such equality files the instruction under "always".
 * A record matching none of an instruction's filed values before or after the change can
 * neither enter nor leave its set, nor change its aggregates, so skipping it loses nothing.
 *
 * What each kind of record meets (language/ast.ts WhenSet):
 * - objects: `object(<c>)`; `within`'s input and partner conditions; `containing`'s object
 *   conditions; `inside`'s object conditions; and every aggregate's `object(<of>)`.
 * - areas: `area(<c>)` (areas, areasContaining) and `inside`'s area conditions.
 * Pure: no I/O.
 */
import { isNested } from '../../domain/data.js';
import { fieldValue, type FilterSubject } from '../../domain/filter.js';
import type { Area, ScalarValue, TrackedObject } from '../../domain/types.js';
import type { Condition, Program } from '../language/ast.js';
import { aggregatesOf, equalityValues, fieldRef, type FieldRef } from './conditions.js';
import type { InstructionEvaluator } from './instruction-evaluator.js';

interface Filed {
  evaluator: InstructionEvaluator;
  /** The lookup that last returned it (no instruction twice in one answer). */
  stamp: number;
}

interface FieldGroup {
  ref: FieldRef;
  byValue: Map<ScalarValue, Set<Filed>>;
}

/** Instructions filed for one kind of record (objects or areas). */
class Side {
  readonly always = new Set<Filed>();
  readonly groups = new Map<string, FieldGroup>();

  file(filed: Filed, lists: readonly (readonly Condition[])[]): void {
    for (const list of lists) {
      const equality = list.find((condition) => equalityValues(condition) !== null);
      if (equality === undefined) {
        this.always.add(filed);
        continue;
      }
      const ref = fieldRef(equality.field);
      const name = `${ref.target ?? ''}:${ref.field}`;
      let group = this.groups.get(name);
      if (group === undefined) {
        group = { ref, byValue: new Map() };
        this.groups.set(name, group);
      }
      for (const value of equalityValues(equality) as ScalarValue[]) {
        let set = group.byValue.get(value);
        if (set === undefined) {
          set = new Set();
          group.byValue.set(value, set);
        }
        set.add(filed);
      }
    }
  }

  unfile(filed: Filed): void {
    this.always.delete(filed);
    for (const [name, group] of this.groups) {
      for (const [value, set] of group.byValue) {
        set.delete(filed);
        if (set.size === 0) group.byValue.delete(value);
      }
      if (group.byValue.size === 0) this.groups.delete(name);
    }
  }

  collect(records: readonly (FilterSubject | null)[], stamp: number, out: InstructionEvaluator[]): void {
    const take = (filed: Filed): void => {
      if (filed.stamp === stamp) return;
      filed.stamp = stamp;
      out.push(filed.evaluator);
    };
    for (const filed of this.always) take(filed);
    for (const group of this.groups.values()) {
      for (const record of records) {
        if (record === null) continue;
        const value = fieldValue(record, group.ref.field, group.ref.target);
        // A nested value equals no condition's value (domain/filter.ts).
        if (value === undefined || isNested(value)) continue;
        const set = group.byValue.get(value);
        if (set !== undefined) for (const filed of set) take(filed);
      }
    }
  }
}

/** The condition lists of a program that an object's change meets. */
function objectLists(program: Program): (readonly Condition[])[] {
  const when = program.when;
  const lists: (readonly Condition[])[] = aggregatesOf(program).map((expr) => expr.of);
  if (when.kind === 'objects' || when.kind === 'objectsInside') lists.push(when.filter);
  if (when.kind === 'pairs') lists.push(when.filter, when.partner);
  if (when.kind === 'areasContaining') lists.push(when.objects);
  return lists;
}

/** The condition lists of a program that an area's change meets. */
function areaLists(program: Program): (readonly Condition[])[] {
  const when = program.when;
  if (when.kind === 'areas' || when.kind === 'areasContaining') return [when.filter];
  if (when.kind === 'objectsInside') return [when.areas];
  return [];
}

export class InstructionIndex {
  private readonly objects = new Side();
  private readonly areas = new Side();
  private readonly filed = new Map<InstructionEvaluator, Filed>();
  private stamp = 0;

  get size(): number {
    return this.filed.size;
  }

  add(evaluator: InstructionEvaluator): void {
    if (this.filed.has(evaluator)) return;
    const filed: Filed = { evaluator, stamp: 0 };
    this.filed.set(evaluator, filed);
    this.objects.file(filed, objectLists(evaluator.program));
    this.areas.file(filed, areaLists(evaluator.program));
  }

  remove(evaluator: InstructionEvaluator): void {
    const filed = this.filed.get(evaluator);
    if (filed === undefined) return;
    this.filed.delete(evaluator);
    this.objects.unfile(filed);
    this.areas.unfile(filed);
  }

  /** The instructions an object's change (`prev` null: created; `next` null: deleted) may affect. */
  objectChanged(prev: TrackedObject | null, next: TrackedObject | null): InstructionEvaluator[] {
    const out: InstructionEvaluator[] = [];
    this.objects.collect([prev, next], ++this.stamp, out);
    return out;
  }

  /** The instructions an area's change (`prev` null: created; `next` null: deleted) may affect. */
  areaChanged(prev: Area | null, next: Area | null): InstructionEvaluator[] {
    const out: InstructionEvaluator[] = [];
    this.areas.collect([prev, next], ++this.stamp, out);
    return out;
  }
}
