/**
 * Presence (hivekit-compat.md 6, decisions.md `connectionStatus`): which objects have an
 * open data-provider connection. A signed-in connection whose principal carries data-provider
 * claims (JWT `dpv`: realm name → object-id globs) claims those ids while it is open; an
 * object is `con` while at least one open connection's claim matches its id, else `dis`.
 * Writing a location changes nothing here.
 *
 * When a connection's claims start or end, the objects that exist and change status because
 * of it get a `cst` bus event (live subscriptions turn it into `upd` pushes) and a pub/sub
 * publication `connectionStatusChanged` under the object's id, payload `{cst, id}`. Creating
 * an object publishes nothing (it simply reads as `con` when claimed). Transitions are worked
 * out one at a time, in the order connections open and close.
 *
 * Across processes (cluster mode, a NATS bus): every process announces the distinct claims
 * of its connections per realm as a lease (`bus.publishPresence`, full state, on every
 * change and every heartbeat, default 2 s; the lease lasts three heartbeats), withdraws
 * them on close, and keeps the union of its own and the other processes' live claims. A
 * process that dies stops renewing: the others drop its claims when the lease runs out.
 * Each process works out the transitions of its own view itself and delivers their events
 * to its own subscribers only (`bus.publishLocal`): one event per change per subscriber,
 * whichever process the change came from. With the local bus there are no other processes
 * and nothing else changes. See docs/operations.md "NATS bus".
 */
import type { Principal } from '../auth/principal.js';
import { compileGlob, type CompiledGlob } from '../domain/id-glob.js';
import type { ConnectionStatus } from '../domain/types.js';
import { randomUUID } from 'node:crypto';
import type { LocusEvent } from '../domain/events.js';
import type { BusSubscription, EventBus, PresenceMessage } from '../events/port.js';
import type { ObjectStore } from '../store/port.js';
import type { LiveConnection } from './live-connection.js';
import type { PresenceLookup } from './presence-port.js';

/** The pub/sub event of a presence change (compat 6). */
export const connectionStatusChanged = 'connectionStatusChanged';

/** A realm named in a claim, resolved within the principal's tenant. */
export interface ClaimedRealm {
  /** The storage key (types.ts Realm.id). */
  key: string;
}

/** Resolves a realm name of a `dpv` claim for this principal; null: no such realm (the claim is ignored). */
export type ClaimRealmResolver = (principal: Principal, name: string) => Promise<ClaimedRealm | null>;

export interface PresenceOptions {
  bus: EventBus;
  objects: Pick<ObjectStore, 'list'>;
  resolveRealm: ClaimRealmResolver;
  /** Hears of failures while working out a transition (the claims still hold). */
  onError?: (err: unknown) => void;
  /** Hears that a transition touched more objects than it publishes events for. */
  onTruncated?: (realm: string, limit: number) => void;
  /**
   * Most objects one transition publishes events for, per realm (default 100,000). Reads
   * are exact whatever the number; only the events of the objects past it are skipped.
   */
  maxTransitionObjects?: number;
  /** How often this process renews its claims' lease for the other processes (default 2,000 ms); a lease lasts three. */
  heartbeatMs?: number;
}

/** Another process's claims as last announced: realm key → pattern → glob; and when they lapse. */
interface RemoteClaims {
  expires: number;
  realms: Map<string, Map<string, CompiledGlob>>;
}

/** Heartbeats a lease outlives: the claims of a process that missed this many are dropped. */
const leaseHeartbeats = 3;
/** The longest lease another process's message can ask for. */
const maxLeaseMs = 60_000;

/** Claims of one realm: literal ids and globs, each counted once per claiming connection. */
interface RealmClaims {
  literals: Map<string, number>;
  globs: Map<string, { glob: CompiledGlob; count: number }>;
}

/** Ids listed per store page while working out a transition. */
const pageSize = 1000;

export class PresenceRegistry implements PresenceLookup {
  private readonly realms = new Map<string, RealmClaims>();
  /** Connection id → realm key → its distinct claimed globs there. */
  private readonly connections = new Map<string, Map<string, CompiledGlob[]>>();
  private queue: Promise<void> = Promise.resolve();
  private readonly maxObjects: number;
  /** This process, as the others know its claims. */
  readonly processId = randomUUID();
  private readonly heartbeatMs: number;
  /** Other processes' live claims (counted into `realms` too, once per process and pattern). */
  private readonly remote = new Map<string, RemoteClaims>();
  private readonly timer: NodeJS.Timeout;
  private readonly presenceSub: BusSubscription;
  /** A snapshot of our claims is due (coalesces bursts of connections). */
  private announceDue: NodeJS.Timeout | null = null;
  /** The last snapshot sent had no claims (then the heartbeat stays quiet). */
  private sentEmpty = true;
  private closed = false;

  constructor(private readonly options: PresenceOptions) {
    this.maxObjects = options.maxTransitionObjects ?? 100_000;
    this.heartbeatMs = options.heartbeatMs ?? 2_000;
    this.presenceSub = options.bus.subscribePresence((message) => this.onPresence(message));
    this.timer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.timer.unref();
    options.bus.publishPresence({ kind: 'hello', process: this.processId });
  }

  /**
   * The bus came back after an outage: the others may have let our lease lapse, and we theirs.
   * Both sides send their claims now rather than at their next heartbeat.
   */
  resync(): void {
    if (this.closed) return;
    this.options.bus.publishPresence({ kind: 'hello', process: this.processId });
    if (!this.sentEmpty) this.claimsChanged();
  }

  /** Withdraws this process's claims from the others at once and stops the heartbeat (shutdown, before the bus closes). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    if (this.announceDue !== null) clearTimeout(this.announceDue);
    this.presenceSub.unsubscribe();
    this.options.bus.publishPresence({ kind: 'withdraw', process: this.processId });
  }

  statusOf(realm: string, id: string): ConnectionStatus {
    const claims = this.realms.get(realm);
    if (claims === undefined) return 'dis';
    if (claims.literals.has(id)) return 'con';
    for (const { glob } of claims.globs.values()) if (glob.matches(id)) return 'con';
    return 'dis';
  }

  /**
   * A connection signed in: its data-provider claims take effect, and end when it closes.
   * Call once per connection, after a successful sign-in.
   */
  connectionOpened(connection: LiveConnection): void {
    const claimed = connection.principal.dataProvider;
    if (claimed === null || claimed === undefined || Object.keys(claimed).length === 0) return;
    if (this.connections.has(connection.id)) return;
    this.connections.set(connection.id, new Map());
    let open = true;
    connection.onClose(() => {
      open = false;
      this.enqueue(() => this.release(connection.id));
    });
    this.enqueue(() => this.claim(connection, claimed, () => open));
  }

  /** Resolves once every transition queued so far is worked out (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((err: unknown) => this.options.onError?.(err));
  }

  private async claim(connection: LiveConnection, claimed: Readonly<Record<string, readonly string[]>>, isOpen: () => boolean): Promise<void> {
    const { principal } = connection;
    const resolved: [string, CompiledGlob[]][] = [];
    for (const [name, patterns] of Object.entries(claimed)) {
      if (!Array.isArray(patterns)) continue;
      const distinct = [...new Set(patterns.filter((p): p is string => typeof p === 'string' && p !== ''))];
      if (distinct.length === 0) continue;
      const realm = await this.options.resolveRealm(principal, name);
      if (realm === null) continue;
      // A principal confined to one realm claims nothing elsewhere.
      if (principal.realm !== null && principal.realm !== name && principal.realm !== realm.key) continue;
      resolved.push([realm.key, distinct.map(compileGlob)]);
    }
    const mine = this.connections.get(connection.id);
    if (!isOpen() || mine === undefined) return;
    for (const [key, globs] of resolved) {
      const merged = new Map((mine.get(key) ?? []).map((glob) => [glob.pattern, glob]));
      const added = globs.filter((glob) => !merged.has(glob.pattern));
      if (added.length === 0) continue;
      for (const glob of added) merged.set(glob.pattern, glob);
      mine.set(key, [...merged.values()]);
      this.count(key, added, +1);
      this.claimsChanged();
    }
    // The claims hold from here on (reads see `con`); now the events of the objects that changed.
    for (const [key, globs] of mine) {
      const own = new Set(globs.map((glob) => glob.pattern));
      await this.announce(key, globs, 'con', (id) => !this.claimedByOthers(key, id, own));
    }
  }

  private async release(connectionId: string): Promise<void> {
    const mine = this.connections.get(connectionId);
    this.connections.delete(connectionId);
    if (mine === undefined) return;
    for (const [key, globs] of mine) this.count(key, globs, -1);
    if (mine.size > 0) this.claimsChanged();
    for (const [key, globs] of mine) {
      await this.announce(key, globs, 'dis', (id) => this.statusOf(key, id) === 'dis');
    }
  }

  // ---- claims shared with other processes ----

  /** Our distinct claims per realm, as the other processes get them. */
  private snapshot(): Record<string, string[]> {
    const out = new Map<string, Set<string>>();
    for (const realms of this.connections.values()) {
      for (const [key, globs] of realms) {
        let set = out.get(key);
        if (set === undefined) out.set(key, (set = new Set()));
        for (const glob of globs) set.add(glob.pattern);
      }
    }
    return Object.fromEntries([...out].map(([key, set]) => [key, [...set]]));
  }

  private announceClaims(): void {
    if (this.closed) return;
    const claims = this.snapshot();
    const empty = Object.keys(claims).length === 0;
    if (empty && this.sentEmpty) return;
    this.sentEmpty = empty;
    this.options.bus.publishPresence({ kind: 'claims', process: this.processId, leaseMs: this.heartbeatMs * leaseHeartbeats, claims });
  }

  /** Our claims changed: the others hear of it promptly (bursts coalesce into one snapshot). */
  private claimsChanged(): void {
    if (this.closed || this.announceDue !== null) return;
    this.announceDue = setTimeout(() => {
      this.announceDue = null;
      this.announceClaims();
    }, 20);
    this.announceDue.unref();
  }

  private heartbeat(): void {
    this.announceClaims();
    const now = Date.now();
    for (const [process, claims] of this.remote) {
      if (claims.expires < now) this.enqueue(() => this.dropRemote(process, true));
    }
  }

  private onPresence(message: PresenceMessage): void {
    if (this.closed || message.process === this.processId) return;
    if (message.kind === 'withdraw') {
      this.enqueue(() => this.dropRemote(message.process, false));
      return;
    }
    if (message.kind === 'hello') {
      // A new process: it learns our claims now, not at the next heartbeat.
      if (!this.sentEmpty) this.claimsChanged();
      return;
    }
    if (message.kind !== 'claims' || typeof message.claims !== 'object' || message.claims === null) return;
    let entry = this.remote.get(message.process);
    if (entry === undefined) {
      entry = { expires: 0, realms: new Map() };
      this.remote.set(message.process, entry);
    }
    // A lease is never longer than a minute, whatever the message says.
    const leaseMs = Number.isFinite(message.leaseMs) && message.leaseMs > 0 ? Math.min(message.leaseMs, maxLeaseMs) : this.heartbeatMs * leaseHeartbeats;
    entry.expires = Date.now() + leaseMs;
    const claims = message.claims;
    this.enqueue(() => this.applyRemote(message.process, claims));
  }

  /** Another process's claims are now `claims`: count the difference, then announce what changed. */
  private async applyRemote(process: string, claims: Record<string, unknown>): Promise<void> {
    const entry = this.remote.get(process);
    if (entry === undefined) return;
    const next = new Map<string, Map<string, CompiledGlob>>();
    for (const [key, patterns] of Object.entries(claims)) {
      if (!Array.isArray(patterns)) continue;
      const globs = new Map<string, CompiledGlob>();
      for (const p of patterns) if (typeof p === 'string' && p !== '' && !globs.has(p)) globs.set(p, compileGlob(p));
      if (globs.size > 0) next.set(key, globs);
    }
    const previous = entry.realms;
    entry.realms = next;
    // Added first (an id still claimed by a pattern about to go is not newly `con`), then removed.
    for (const [key, globs] of next) {
      const before = previous.get(key);
      const added = [...globs.values()].filter((glob) => before?.has(glob.pattern) !== true);
      if (added.length === 0) continue;
      this.count(key, added, +1);
      const own = new Set(added.map((glob) => glob.pattern));
      await this.announce(key, added, 'con', (id) => !this.claimedByOthers(key, id, own));
    }
    for (const [key, globs] of previous) {
      const after = next.get(key);
      const removed = [...globs.values()].filter((glob) => after?.has(glob.pattern) !== true);
      if (removed.length === 0) continue;
      this.count(key, removed, -1);
      await this.announce(key, removed, 'dis', (id) => this.statusOf(key, id) === 'dis');
    }
  }

  /** Another process withdrew, or (`onlyIfExpired`) its lease ran out: its claims end. */
  private async dropRemote(process: string, onlyIfExpired: boolean): Promise<void> {
    const entry = this.remote.get(process);
    if (entry === undefined || (onlyIfExpired && entry.expires >= Date.now())) return;
    this.remote.delete(process);
    const globsOf = [...entry.realms].map(([key, globs]) => [key, [...globs.values()]] as const);
    for (const [key, globs] of globsOf) this.count(key, globs, -1);
    for (const [key, globs] of globsOf) {
      await this.announce(key, globs, 'dis', (id) => this.statusOf(key, id) === 'dis');
    }
  }

  private count(realm: string, globs: readonly CompiledGlob[], delta: 1 | -1): void {
    let claims = this.realms.get(realm);
    if (claims === undefined) {
      claims = { literals: new Map(), globs: new Map() };
      this.realms.set(realm, claims);
    }
    for (const glob of globs) {
      if (glob.literal) {
        const n = (claims.literals.get(glob.pattern) ?? 0) + delta;
        if (n > 0) claims.literals.set(glob.pattern, n);
        else claims.literals.delete(glob.pattern);
      } else {
        const entry = claims.globs.get(glob.pattern) ?? { glob, count: 0 };
        entry.count += delta;
        if (entry.count > 0) claims.globs.set(glob.pattern, entry);
        else claims.globs.delete(glob.pattern);
      }
    }
    if (claims.literals.size === 0 && claims.globs.size === 0) this.realms.delete(realm);
  }

  /** True when a connection other than the one holding `own` claims the id. */
  private claimedByOthers(realm: string, id: string, own: ReadonlySet<string>): boolean {
    const claims = this.realms.get(realm);
    if (claims === undefined) return false;
    if ((claims.literals.get(id) ?? 0) > (own.has(id) ? 1 : 0)) return true;
    for (const [pattern, { glob, count }] of claims.globs) {
      if (count > (own.has(pattern) ? 1 : 0) && glob.matches(id)) return true;
    }
    return false;
  }

  /** Publishes `status` for the existing objects matching `globs` that `changed` accepts. */
  private async announce(realm: string, globs: readonly CompiledGlob[], status: 'con' | 'dis', changed: (id: string) => boolean): Promise<void> {
    let announced = 0;
    for await (const ids of this.matchingIds(realm, globs)) {
      const events: LocusEvent[] = [];
      for (const id of ids) {
        if (!changed(id)) continue;
        if (announced === this.maxObjects) {
          this.options.onTruncated?.(realm, this.maxObjects);
          this.options.bus.publishLocal(realm, events);
          return;
        }
        announced++;
        events.push(
          { kind: 'cst', realm, object: id, status },
          { kind: 'pub', realm, eve: connectionStatusChanged, idp: id, dat: { cst: status, id } },
        );
      }
      this.options.bus.publishLocal(realm, events);
    }
  }

  /**
   * The ids of the realm's objects that match any of the globs, page by page, each once.
   * A glob with a literal prefix reads only the id range of that prefix, a literal id only
   * that id; a glob starting with `*` reads the whole realm (once, for all the globs).
   */
  private async *matchingIds(realm: string, globs: readonly CompiledGlob[]): AsyncGenerator<string[]> {
    for (const { prefix, exact } of coveringRanges(globs)) {
      let cursor: string | undefined;
      for (;;) {
        const page = await this.options.objects.list(realm, {
          limit: exact ? 1 : pageSize,
          fields: [],
          ...(prefix === '' ? {} : { filter: [{ field: 'id', op: exact ? '=' : '>=', value: prefix }] }),
          ...(cursor === undefined ? {} : { cursor }),
        });
        const ids: string[] = [];
        let past = false;
        for (const { id } of page.items) {
          // Ids are listed in code point order: those with the prefix come together.
          if (!id.startsWith(prefix)) {
            past = true;
            break;
          }
          if (globs.some((glob) => glob.matches(id))) ids.push(id);
        }
        if (ids.length > 0) yield ids;
        if (past || exact || page.next === null) break;
        cursor = page.next;
      }
    }
  }
}

/** An id range to read: the ids starting with `prefix`, or (`exact`) only the id equal to it. */
export interface IdRange {
  prefix: string;
  exact: boolean;
}

/**
 * The fewest id ranges that hold every id the globs match, none nested in another: one per
 * literal prefix not extending another; `exact` when only literal globs equal to it need it.
 */
export function coveringRanges(globs: readonly CompiledGlob[]): IdRange[] {
  const sorted = [...globs].sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  const out: IdRange[] = [];
  for (const glob of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && glob.prefix.startsWith(last.prefix)) {
      if (!glob.literal || glob.prefix !== last.prefix) last.exact = false;
      continue;
    }
    out.push({ prefix: glob.prefix, exact: glob.literal });
  }
  return out;
}
