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

/** A store lookup by key, held; `drop` decides which entries a control message names. */
class HeldLookup<T extends object> {
  private readonly held = new Map<string, Held<T>>();
  /** Bumped by every drop: a lookup that began before it is not held. */
  private epoch = 0;

  constructor(
    private readonly read: (key: string) => Promise<T | null>,
    private readonly clock: () => number,
    private readonly holdMs: number,
  ) {}

  async get(key: string): Promise<T | null> {
    const now = this.clock();
    const hit = this.held.get(key);
    if (hit !== undefined) {
      if (hit.untilMs > now) return { ...hit.record };
      this.held.delete(key);
    }
    const epoch = this.epoch;
    const record = await this.read(key);
    if (record !== null && epoch === this.epoch) {
      if (this.held.size >= HELD_MAX) this.held.clear();
      this.held.set(key, { record: Object.freeze({ ...record }), untilMs: now + this.holdMs });
    }
    return record;
  }

  /** Drops one key. */
  dropKey(key: string): void {
    this.epoch++;
    this.held.delete(key);
  }

  /** Drops every entry `names` picks. */
  dropWhere(names: (record: Readonly<T>) => boolean): void {
    this.epoch++;
    for (const [key, entry] of this.held) if (names(entry.record)) this.held.delete(key);
  }

  get size(): number {
    return this.held.size;
  }
}

/** Opaque tokens by hash (TokenStore.findByHash), dropped by `token.revoked`. */
export class HeldTokens implements Pick<TokenStore, 'findByHash'> {
  private readonly lookup: HeldLookup<TokenRecord>;

  constructor(tokens: Pick<TokenStore, 'findByHash'>, clock: () => number = Date.now, holdMs = HOLD_MS) {
    this.lookup = new HeldLookup((hash) => tokens.findByHash(hash), clock, holdMs);
  }

  findByHash(hash: string): Promise<TokenRecord | null> {
    return this.lookup.get(hash);
  }

  hear(message: ControlMessage): void {
    if (message.kind !== 'token.revoked') return;
    if (message.hash !== null) this.lookup.dropKey(message.hash);
    else this.lookup.dropWhere((record) => record.realm === message.realm);
  }

  /** Tokens held (for tests and diagnostics). */
  get size(): number {
    return this.lookup.size;
  }
}

/** Signing keys by id (SigningKeyStore.get), dropped by `keys.changed` of their tenant. */
export class HeldSigningKeys implements Pick<SigningKeyStore, 'get'> {
  private readonly lookup: HeldLookup<SigningKeyRecord>;

  constructor(keys: Pick<SigningKeyStore, 'get'>, clock: () => number = Date.now, holdMs = HOLD_MS) {
    this.lookup = new HeldLookup((id) => keys.get(id), clock, holdMs);
  }

  get(id: string): Promise<SigningKeyRecord | null> {
    return this.lookup.get(id);
  }

  hear(message: ControlMessage): void {
    if (message.kind === 'keys.changed') this.lookup.dropWhere((record) => record.tenant === message.tenant);
  }

  /** Keys held (for tests and diagnostics). */
  get size(): number {
    return this.lookup.size;
  }
}
