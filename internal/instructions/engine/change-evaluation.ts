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

/** Applies an object's new state (`next` null: deleted) and answers the instructions whose sets changed. */
export function applyObjectChange(mirror: RealmMirror, index: InstructionIndex, id: string, next: TrackedObject | null): InstructionDelta[] {
  const prev = mirror.object(id);
  if (prev === null && next === null) return [];
  mirror.applyObject(prev, next);
  return collect(index.objectChanged(prev, next), (ev) => ev.onObjectChange(mirror, prev, next));
}

/** Applies an area's new state (`next` null: deleted) and answers the instructions whose sets changed. */
export function applyAreaChange(mirror: RealmMirror, index: InstructionIndex, id: string, next: Area | null): InstructionDelta[] {
  const prev = mirror.area(id);
  if (prev === null && next === null) return [];
  mirror.applyArea(prev, next);
  return collect(index.areaChanged(prev, next), (ev) => ev.onAreaChange(mirror, prev, next));
}
