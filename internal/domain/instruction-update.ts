/**
 * Instruction update rules and the evaluation lease's name and times, shared by both store
 * adapters (they read the old record, apply these and write the result). Pure.
 */
import type { InstructionPatch, InstructionRecord } from './instruction.js';
import { mergeData } from './object.js';

/** The store lease whose holder evaluates the realm's instructions. */
export function instructionLeaseName(realm: string): string {
  return `instructions:${realm}`;
}

/**
 * The record after an update at `now`: label replaced when given, data merged key by key at the
 * top level (null removes a key), suspension set when given. A source that differs from the
 * stored one restarts the instruction: the next generation, not suspended; the same source sent
 * again changes nothing, so that an update of label or data that repeats the source (as clients
 * do) does not fire `then` again for every entry.
 */
export function applyInstructionPatch(old: InstructionRecord, patch: InstructionPatch, now: string): { record: InstructionRecord; restarted: boolean } {
  const restarted = patch.source !== undefined && patch.source !== old.source;
  const record: InstructionRecord = {
    ...old,
    label: patch.label === undefined ? old.label : patch.label,
    data: mergeData(old.data, patch.data),
    updated: now,
    suspended: patch.suspended !== undefined ? patch.suspended : restarted ? null : old.suspended,
  };
  if (restarted) {
    record.source = patch.source as string;
    record.generation = old.generation + 1;
  }
  return { record, restarted };
}

/** The expiry of a lease taken at `now` (RFC 3339) for `ttlMs`, in epoch milliseconds. */
export function leaseExpiry(now: string, ttlMs: number): number {
  const at = Date.parse(now);
  if (!Number.isFinite(at)) throw new RangeError(`lease: "${now}" is not a time`);
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`lease: the time to live must be positive, got ${ttlMs}`);
  return at + ttlMs;
}
