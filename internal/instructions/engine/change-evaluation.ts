/**
 * One change of a realm, evaluated: applied to the mirror, then offered to the instructions the
 * index says it may affect. The record before the change is the mirror's, not the change
 * record's `old`: the evaluators' sets and aggregates were built from the mirror, so a change
 * that arrives after a lost one is still compared with what they saw. Pure: no I/O.
 */
import type { Area, TrackedObject } from '../../domain/types.js';
import type { InstructionEvaluator, MembershipDelta } from './instruction-evaluator.js';
import type { InstructionIndex } from './instruction-index.js';
import type { RealmMirror } from './realm-mirror.js';

/** What one change did to one instruction's set (never empty). */
export interface InstructionDelta extends MembershipDelta {
  evaluator: InstructionEvaluator;
}

function collect(evaluators: readonly InstructionEvaluator[], evaluate: (ev: InstructionEvaluator) => MembershipDelta): InstructionDelta[] {
  const out: InstructionDelta[] = [];
  for (const evaluator of evaluators) {
    const { joined, left } = evaluate(evaluator);
    if (joined.length > 0 || left.length > 0) out.push({ evaluator, joined, left });
  }
  return out;
}

/**
 * A change applied to the mirror: the instructions it may affect (the index's answer, from the
 * mirror's previous state, which after a lost message differs from a record's `old`) and how to
 * evaluate one of them against it. The engine evaluates them one by one (timing and failures per
 * instruction); applyObjectChange and applyAreaChange collect the deltas.
 */
export interface AppliedChange {
  evaluators: readonly InstructionEvaluator[];
  evaluate(evaluator: InstructionEvaluator): MembershipDelta;
}

const nothing: AppliedChange = { evaluators: [], evaluate: () => ({ joined: [], left: [] }) };

/** Applies an object's new state (`next` null: deleted) to the mirror. */
export function applyObject(mirror: RealmMirror, index: InstructionIndex, id: string, next: TrackedObject | null): AppliedChange {
  const prev = mirror.object(id);
  if (prev === null && next === null) return nothing;
  mirror.applyObject(prev, next);
  return { evaluators: index.objectChanged(prev, next), evaluate: (ev) => ev.onObjectChange(mirror, prev, next) };
}

/** Applies an area's new state (`next` null: deleted) to the mirror. */
export function applyArea(mirror: RealmMirror, index: InstructionIndex, id: string, next: Area | null): AppliedChange {
  const prev = mirror.area(id);
  if (prev === null && next === null) return nothing;
  mirror.applyArea(prev, next);
  return { evaluators: index.areaChanged(prev, next), evaluate: (ev) => ev.onAreaChange(mirror, prev, next) };
}

/** Applies an object's new state (`next` null: deleted) and answers the instructions whose sets changed. */
export function applyObjectChange(mirror: RealmMirror, index: InstructionIndex, id: string, next: TrackedObject | null): InstructionDelta[] {
  const applied = applyObject(mirror, index, id, next);
  return collect(applied.evaluators, (ev) => applied.evaluate(ev));
}

/** Applies an area's new state (`next` null: deleted) and answers the instructions whose sets changed. */
export function applyAreaChange(mirror: RealmMirror, index: InstructionIndex, id: string, next: Area | null): InstructionDelta[] {
  const applied = applyArea(mirror, index, id, next);
  return collect(applied.evaluators, (ev) => applied.evaluate(ev));
}
