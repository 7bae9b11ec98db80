/**
 * Instructions as stored: a HiveScript source with its label and data, and the engine's state
 * for it (membership of its `when` set, actions not yet carried out, suspension).
 */
import type { Data, DataPatch } from './types.js';

export interface InstructionRecord {
  id: string;
  label: string | null;
  /** The HiveScript source, exactly as sent. */
  source: string;
  data: Data;
  created: string;
  updated: string;
  /** Bumped by every new source: membership and pending actions of older generations are void. */
  generation: number;
  /** Why the engine stopped running it (keeps failing), or null while it runs. */
  suspended: string | null;
}

export interface InstructionPatch {
  label?: string | null;
  /** A new source: bumps the generation, clears membership and pending actions, clears `suspended`. */
  source?: string;
  data?: DataPatch;
  suspended?: string | null;
}

/**
 * An action the engine decided and has not carried out yet (the outbox): written in the same
 * transaction as the membership change that caused it, deleted once done, so a process that dies
 * in between leaves it to the next owner (at least once).
 */
export interface PendingAction {
  /** Unique per realm; also the idempotency key of a sendToUrl request. */
  key: string;
  instruction: string;
  generation: number;
  /** `then` (entries joined) or `until` (entries left). */
  part: 'then' | 'until';
  /** Entry keys (language/ast.ts entryKey) the action acts on. */
  entries: string[];
  created: string;
  /** Delivery attempts so far (sendToUrl). */
  attempts: number;
  /**
   * The depth its writes carry (ChangeOrigin.depth): one more than that of the change that
   * caused it (a client's change is depth 0). Absent: 1.
   */
  depth?: number;
}

/** One instruction's membership change, applied atomically with the pending actions it causes. */
export interface MembershipChange {
  instruction: string;
  /** Only applied while the instruction still has this generation (a change of source voids it). */
  generation: number;
  joined: string[];
  left: string[];
}

/** A realm's evaluation lease (store-held, expiring). */
export interface Lease {
  name: string;
  holder: string;
  /** RFC 3339 expiry. */
  expires: string;
}
