/**
 * Sign-in lookups held in memory: opaque tokens by hash, signing keys by id. A v1 connection
 * checks its token at every message and every JWT sign-in looks its key up, so these are hot
 * paths; the store is asked once, then the answer is held.
 *
 * Told, not guessed: a held entry is dropped when a control message names it (a token revoked,
 * a realm deleted, a tenant's keys changed: service/control.ts), in every process. As a bound
 * for changes no control message reaches this process about (the admin CLI beside a server on
 * the local bus, a message lost in a bus outage) an entry is held at most `holdMs` (1 s).
 * Unknown tokens and keys are never held, so a stream of made-up ones cannot fill the cache,
 * and a lookup that was under way when a drop came is not held either.
 */
import type { ControlMessage } from '../domain/events.js';
import type { SigningKeyRecord, TokenRecord } from '../domain/types.js';
import type { SigningKeyStore, TokenStore } from '../store/port.js';

/** How long an entry is held without a control message naming it. */
export const HOLD_MS = 1000;

/** Entries held at most (a few hundred bytes each); past this the cache starts over. */
const HELD_MAX = 10_000;

interface Held<T> {
  record: Readonly<T>;
  untilMs: number;
}

/** What a control message drops: one key, every entry `where` picks, or (null) nothing. */
export type HeldDrop<T> = { key: string } | { where: (record: Readonly<T>) => boolean } | null;

/**
 * A store lookup by key, held at most `holdMs`; `drops` says which entries a control message
 * names. Its uses below differ only in their lookup and their drops.
 */
export class HeldLookup<T extends object> {
  private readonly entries = new Map<string, Held<T>>();
  /** Bumped by every drop: a lookup that began before it is not held. */
  private epoch = 0;

  constructor(
    private readonly read: (key: string) => Promise<T | null>,
    private readonly drops: (message: ControlMessage) => HeldDrop<T>,
    private readonly clock: () => number = Date.now,
    private readonly holdMs: number = HOLD_MS,
  ) {}

  async get(key: string): Promise<T | null> {
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.untilMs > now) return { ...hit.record };
      this.entries.delete(key);
    }
    const epoch = this.epoch;
    const record = await this.read(key);
    if (record !== null && epoch === this.epoch) {
      if (this.entries.size >= HELD_MAX) this.entries.clear();
      this.entries.set(key, { record: Object.freeze({ ...record }), untilMs: now + this.holdMs });
    }
    return record;
  }

  /**
   * The entry held for `key` now, without asking the store: what get would answer from
   * memory (undefined: get would ask the store). Not a copy: read it, do not keep it.
   */
  held(key: string): Readonly<T> | undefined {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.untilMs > this.clock() ? hit.record : undefined;
  }

  hear(message: ControlMessage): void {
    const drop = this.drops(message);
    if (drop === null) return;
    this.epoch++;
    if ('key' in drop) {
      this.entries.delete(drop.key);
      return;
    }
    for (const [key, entry] of this.entries) if (drop.where(entry.record)) this.entries.delete(key);
  }

  /** Drops every entry (the bus may have lost control messages). */
  dropAll(): void {
    this.epoch++;
    this.entries.clear();
  }

  /** Entries held (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }
}

/** `token.revoked` drops its token, or (no hash) every token of its realm. */
function tokenDrops(message: ControlMessage): HeldDrop<TokenRecord> {
  if (message.kind !== 'token.revoked') return null;
  if (message.hash !== null) return { key: message.hash };
  const realm = message.realm;
  return { where: (record) => record.realm === realm };
}

/** `keys.changed` drops every key of its tenant. */
function keyDrops(message: ControlMessage): HeldDrop<SigningKeyRecord> {
  if (message.kind !== 'keys.changed') return null;
  const tenant = message.tenant;
  return { where: (record) => record.tenant === tenant };
}

/** Opaque tokens by hash (TokenStore.findByHash), dropped by `token.revoked`. */
export class HeldTokens extends HeldLookup<TokenRecord> implements Pick<TokenStore, 'findByHash'> {
  constructor(tokens: Pick<TokenStore, 'findByHash'>, clock: () => number = Date.now, holdMs = HOLD_MS) {
    super((hash) => tokens.findByHash(hash), tokenDrops, clock, holdMs);
  }

  findByHash(hash: string): Promise<TokenRecord | null> {
    return this.get(hash);
  }
}

/** Signing keys by id (SigningKeyStore.get), dropped by `keys.changed` of their tenant. */
export class HeldSigningKeys extends HeldLookup<SigningKeyRecord> implements Pick<SigningKeyStore, 'get'> {
  constructor(keys: Pick<SigningKeyStore, 'get'>, clock: () => number = Date.now, holdMs = HOLD_MS) {
    super((id) => keys.get(id), keyDrops, clock, holdMs);
  }
}
