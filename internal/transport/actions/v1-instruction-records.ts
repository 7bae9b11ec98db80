/**
 * Instructions on the v1 wire (hivekit-compat.md 4.9, 5.3). `ins rea` answers
 * `{"ins","lab","dat"}`, `ins lis` entries are exactly `{"id","lab","dat"}` (the client's test
 * compares them with deep equality, so an unset label is `""` there, as in the other lists),
 * and `ins` subscription pushes carry `{"id","lab","dat"}` per instruction.
 *
 * Suspension (locus extension): a suspended instruction's read and push records add `sus`,
 * the reason the engine stopped running it; a running one has no `sus`. The client passes
 * unknown keys through unchanged (its user sees `sus`), and the list, which the client's test
 * compares exactly, never carries it.
 */
import type { InstructionRecord } from '../../domain/instruction.js';
import type { Data } from '../../domain/types.js';

export interface V1InstructionRead {
  ins: string;
  lab?: string;
  dat: Data;
  sus?: string;
}

export interface V1InstructionListEntry {
  id: string;
  lab: string;
  dat: Data;
}

export interface V1InstructionPushEntry {
  id: string;
  lab?: string;
  dat: Data;
  sus?: string;
}

/** `ins rea`'s `dat`: `lab` only when set, `sus` only while suspended. */
export function instructionRead(record: InstructionRecord): V1InstructionRead {
  const out: V1InstructionRead = record.label === null ? { ins: record.source, dat: record.data } : { ins: record.source, lab: record.label, dat: record.data };
  if (record.suspended !== null) out.sus = record.suspended;
  return out;
}

/** An `ins lis` entry: exactly `{id, lab, dat}`. */
export function instructionListEntry(record: InstructionRecord): V1InstructionListEntry {
  return { id: record.id, lab: record.label ?? '', dat: record.data };
}

/** One entry of an `ins` push: `{id, lab?, dat, sus?}`. */
export function instructionPushEntry(record: InstructionRecord): V1InstructionPushEntry {
  const out: V1InstructionPushEntry = record.label === null ? { id: record.id, dat: record.data } : { id: record.id, lab: record.label, dat: record.data };
  if (record.suspended !== null) out.sus = record.suspended;
  return out;
}
