/**
 * What the instruction engine reports: to the metrics (InstructionObserver; nothing when
 * metrics are off) and to the realm's instruction log (InstructionLogEntry).
 */
import type { ActionKind } from './action-runner.js';

/** Why an evaluation ran (the `trigger` label of locus_instruction_evaluations_total). */
export type EvaluationTrigger = 'change' | 'create' | 'repair' | 'tick';

/** Where the engine reports what it does (the metrics; nothing when metrics are off). */
export interface InstructionObserver {
  evaluated(realm: string, trigger: EvaluationTrigger, evaluations: number, seconds: number): void;
  entries(realm: string, joined: number, left: number): void;
  action(kind: ActionKind, ok: boolean): void;
  depthLimited(): void;
  leaseHeld(realm: string, held: boolean): void;
  /** The realm's suspended instructions now (0 once this process no longer holds it). */
  suspended(realm: string, count: number): void;
}

export const noObserver: InstructionObserver = {
  evaluated: () => undefined,
  entries: () => undefined,
  action: () => undefined,
  depthLimited: () => undefined,
  leaseHeld: () => undefined,
  suspended: () => undefined,
};

/** A log event of an instruction (hivescript.md 7), for the realm's instruction log. */
export interface InstructionLogEntry {
  id: string;
  lvl: 'info' | 'warn' | 'error';
  msg: string;
}
