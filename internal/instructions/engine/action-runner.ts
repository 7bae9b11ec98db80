/**
 * Carries out one pending action (domain/instruction.ts PendingAction): every `then` or
 * `until` chain of its instruction over the entries that joined or left. Writes go through
 * the object and area services, like a client's, marked with the instruction and the depth
 * of the chain (ChangeOrigin), so events, history and subscriptions see them and the engine
 * can stop chains that trigger each other. `sendToUrl` hands the entries to the delivery
 * queue with an idempotency key derived from the action's key.
 *
 * What acts on what (hivescript.md 3.3, its recommendation): `set` and `delete` act on every
 * distinct object of the entries (both objects of a pair) and on areas; an object or area
 * that no longer exists is skipped, not an error (a deleted object leaves its sets, and the
 * `until` that follows may still name it).
 */
import { entryContents, type EntryContent } from '../delivery/hivekit-body.js';
import type { Action, Entry } from '../language/ast.js';
import { entryOfKey } from '../language/ast.js';
import type { PendingAction } from '../../domain/instruction.js';
import type { Area, ChangeOrigin, Realm, TrackedObject } from '../../domain/types.js';
import { toLocusError } from '../../errors.js';

/** One sendToUrl request (the delivery queue renders the body from the entries). */
export interface SendRequest {
  realm: string;
  instruction: string;
  url: string;
  /** Idempotency key: the same for every retry and for a second carrying-out after a takeover. */
  key: string;
  entries: EntryContent[];
}

/** The writes an action may make: ObjectService and AreaService with an origin. */
export interface ActionWrites {
  setObjectData(realm: Realm, id: string, name: string, value: unknown, origin: ChangeOrigin): Promise<void>;
  deleteObject(realm: Realm, id: string, origin: ChangeOrigin): Promise<void>;
  setAreaData(realm: Realm, id: string, name: string, value: unknown, origin: ChangeOrigin): Promise<void>;
  deleteArea(realm: Realm, id: string, origin: ChangeOrigin): Promise<void>;
}

/** The delivery queue: resolves once the request was delivered (true) or given up (false). */
export type UrlSender = (request: SendRequest) => Promise<boolean>;

export type ActionKind = Action['kind'];

export interface ActionRunnerOptions {
  writes: ActionWrites;
  send: UrlSender;
  /** The realm's current objects and areas (the engine's mirror). */
  source: { object(id: string): TrackedObject | null; area(id: string): Area | null };
  /** Each action carried out, with its outcome. */
  onAction?(kind: ActionKind, ok: boolean): void;
}

/** What carrying out a pending action came to: the first failure, if any. */
export interface ActionOutcome {
  failure: string | null;
}

export class ActionRunner {
  constructor(private readonly options: ActionRunnerOptions) {}

  /** Runs every chain of `chains` over the action's entries, in order; never throws. */
  async run(realm: Realm, action: PendingAction, chains: readonly (readonly Action[])[]): Promise<ActionOutcome> {
    const entries = action.entries.map(entryOfKey);
    const origin: ChangeOrigin = { instruction: action.instruction, depth: action.depth ?? 1 };
    let failure: string | null = null;
    let sends = 0;
    for (const chain of chains) {
      for (const step of chain) {
        // The first request of an action carries its key; a second one in the same action, `<key>#2`.
        const key = step.kind === 'sendToUrl' && ++sends > 1 ? `${action.key}#${sends}` : action.key;
        const problem = await this.step(realm, action, step, entries, origin, key);
        this.options.onAction?.(step.kind, problem === null);
        failure ??= problem;
      }
    }
    return { failure };
  }

  /** One call of a chain over the entries; the failure's text, or null. */
  private async step(realm: Realm, action: PendingAction, step: Action, entries: Entry[], origin: ChangeOrigin, key: string): Promise<string | null> {
    const { writes } = this.options;
    try {
      switch (step.kind) {
        case 'set':
          await this.eachTarget(entries, {
            object: (id) => writes.setObjectData(realm, id, step.name, step.value, origin),
            area: (id) => writes.setAreaData(realm, id, step.name, step.value, origin),
          });
          return null;
        case 'delete':
          await this.eachTarget(entries, {
            object: (id) => writes.deleteObject(realm, id, origin),
            area: (id) => writes.deleteArea(realm, id, origin),
          });
          return null;
        case 'sendToUrl': {
          const delivered = await this.options.send({ realm: realm.id, instruction: action.instruction, url: step.url, key, entries: entryContents(entries, this.options.source) });
          return delivered ? null : `sendToUrl(${step.url}) was not delivered`;
        }
      }
    } catch (err) {
      return `${step.kind} failed: ${toLocusError(err).message}`;
    }
  }

  /** Calls `write` for every distinct object and area of the entries; a missing one is skipped. */
  private async eachTarget(entries: readonly Entry[], write: { object(id: string): Promise<void>; area(id: string): Promise<void> }): Promise<void> {
    const objects = new Set<string>();
    const areas = new Set<string>();
    for (const entry of entries) {
      if (entry.kind === 'object') objects.add(entry.id);
      else if (entry.kind === 'area') areas.add(entry.id);
      else objects.add(entry.a).add(entry.b);
    }
    for (const id of objects) await skipMissing(write.object(id));
    for (const id of areas) await skipMissing(write.area(id));
  }
}

/** A write whose target no longer exists did nothing, which is no failure. */
async function skipMissing(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (err) {
    if (toLocusError(err).code !== 'not_found') throw err;
  }
}
