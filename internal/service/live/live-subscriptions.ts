/**
 * Hivekit subscriptions (hivekit-compat.md section 5): `sub` `cre`/`upd`/`del` with
 * client-chosen ids, scoped to their connection (the same id on another connection is
 * another subscription), and their pushes.
 *
 * Kinds (`dat.typ`): objects (`obj`, realm-objects.ts), areas (`are`: always `uty:"ful"` with
 * the realm's complete area set), tasks (`tsk`, realm-tasks.ts: `cre`/`upd`/`del` like
 * objects), realm data (`rea`: `{"rea":{"id","lab","dat"}}` after each update of that realm),
 * realm events (`sys`: `{"dat":{"typ":"rea","id","act"}}` for each realm create, update and
 * delete of the tenant), instructions (`ins`) and instruction logs (`log`, both
 * instruction-feeds.ts). Everything arrives through the event bus: a realm's `obj`, `del`,
 * `cst`, `are`, `tsk`, `ins` and `log` events and its deletion, and the tenant channel's realm
 * changes. Each realm or tenant with subscriptions here holds one bus subscription. The wire
 * forms named here are written in transport/actions/subscription-pushes.ts (push-port.ts).
 *
 * Pushes are batched per connection (connection-live.ts, every `cycleMs`). `exe:true` and
 * every `upd` push the whole set on the next cycle after the reply; after `del` nothing more
 * is pushed; a closed connection drops everything; a deleted realm drops its subscriptions
 * silently (compat 11 #31).
 *
 * Repair (resync): the bus is at most once. When it says messages may have been lost (a
 * reconnect after an outage: EventBus.onResync), every subscription here is read again from
 * the store and the differences from what its client holds are pushed: objects as
 * `cre`/`upd`/`del` (`dta`), areas as one `ful` set when any readable area differs, realm
 * data as one `ful` record when it differs; the subscriptions of a realm deleted meanwhile
 * end silently, as at a realm deletion. Realm events (`sys`) are events, not state: those
 * sent during the outage are not replayed.
 *
 * Rights (`per`): object and area subscriptions hold only the entities whose id the
 * subscriber may read (readFilter, prepared once per subscription; null for tokens without
 * `per`, which then do no per-entity work); realm events reach only subscribers that may read
 * the realm (realmAllows R); a target subscription needs R on its target.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Principal } from '../../auth/principal.js';
import { idForbidden, readFilter, realmAllows, type IdFilter } from '../../auth/rights.js';
import { tooLarge, notFound, LocusError } from '../../errors.js';
import type { Area, RealmData } from '../../domain/types.js';
import type { OptionLimits, SubscriptionOptions } from '../../domain/subscription.js';
import type { RealmChangedEvent } from '../../domain/events.js';
import type { BusSubscription, EventBus, RealmMessage } from '../../events/port.js';
import type { AreaStore, InstructionStore, ObjectStore, RealmStore, TaskStore } from '../../store/port.js';
import { noPresence, type PresenceLookup } from '../presence-port.js';
import { ConnectionLive, type LiveSubscription } from './connection-live.js';
import { InstructionFeeds, InstructionsSubscription, LogSubscription, type LogEntry, type LogHistory, type RealmInstructions } from './instruction-feeds.js';
import { ObjectSubscription, RealmObjects } from './realm-objects.js';
import type { SubscriberConnection, SubscriptionUpdate } from './push-port.js';
import { RealmTasks, TaskSubscription } from './realm-tasks.js';

/** `unknown subscription <id>`, 404 (the brief's fixed text). */
export const unknownSubscription = (id: string): LocusError => notFound(`unknown subscription ${id.slice(0, 256)}`);

/**
 * A target subscription follows its target's location: its token must be
 * allowed to read the target (`per` R on its id), else 403 and nothing changes.
 */
function checkTarget(readable: IdFilter | null, options: SubscriptionOptions): void {
  if (readable === null || options.kind !== 'objects' || options.scope.kind !== 'target') return;
  if (!readable(options.scope.target)) throw idForbidden('R', options.scope.target);
}

/** Most subscriptions one connection may hold (Hivekit clients keep one per distinct option set). */
export const maxSubscriptionsPerConnection = 1000;

/** The push cycle in ms (compat 5.8 recommends 10–50). */
export const defaultCycleMs = 20;

/** The realm a subscription watches: the storage key, the name the tenant knows, the tenant. */
export interface RealmRef {
  key: string;
  name: string;
  tenant: string;
  label: string | null;
  data: RealmData;
}

export interface LiveOptions extends OptionLimits {
  maxPerConnection?: number;
  cycleMs?: number;
}

/** Store reads a resync runs at most at once (realms checked first, then the subscriptions read). */
const resyncConcurrency = 8;

/** Runs every task, at most `limit` at once; a task that fails is reported and the others go on. */
async function runAll(tasks: readonly (() => Promise<void>)[], limit: number, onError: (err: unknown) => void): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const task = tasks[next++] as () => Promise<void>;
      await task().catch(onError);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

export interface LiveDeps {
  bus: EventBus;
  objects: Pick<ObjectStore, 'list' | 'get'>;
  areas: Pick<AreaStore, 'list'>;
  tasks: Pick<TaskStore, 'list'>;
  /** Where a resync finds out whether a realm still exists, and its label and data. */
  realms: Pick<RealmStore, 'get'>;
  presence?: PresenceLookup;
  onError?: (err: unknown) => void;
  /** Where `ins` subscriptions read the realm's instructions; absent: `ins` and `log` are refused with 501. */
  instructions?: Pick<InstructionStore, 'list'>;
  /** The recent log events an `exe:true` log subscription starts with; absent: none. */
  logHistory?: LogHistory;
}

class AreaSubscription implements LiveSubscription {
  private full = false;
  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly realm: RealmLive,
    /** The area ids the subscriber may read (readFilter); null: every id. */
    readonly readable: IdFilter | null,
  ) {}
  pushFull(): void {
    this.full = true;
    this.conn.schedule(this);
  }
  drain(out: SubscriptionUpdate[]): void {
    if (!this.full) return;
    this.full = false;
    const areas: Area[] = [];
    const { readable } = this;
    for (const [id, area] of this.realm.areaMap ?? []) if (readable === null || readable(id)) areas.push(area);
    out.push({ kind: 'areas', subscription: this.id, areas });
  }
  detach(): void {
    this.conn.unschedule(this);
    this.realm.areaSubs.delete(this);
    this.realm.release();
  }
}

class RealmDataSubscription implements LiveSubscription {
  private pending: SubscriptionUpdate[] = [];
  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly tenant: TenantLive,
    public realm: RealmRef,
  ) {}
  /** One push per realm update (compat 8.1), the record as of that update. */
  changed(label: string | null, data: RealmData): void {
    this.realm = { ...this.realm, label, data };
    this.pushCurrent();
  }
  pushCurrent(): void {
    this.pending.push({ kind: 'realmData', subscription: this.id, realm: this.realm.name, label: this.realm.label, data: this.realm.data });
    this.conn.schedule(this);
  }
  drain(out: SubscriptionUpdate[]): void {
    for (const message of this.pending) out.push(message);
    this.pending = [];
  }
  detach(): void {
    this.pending = [];
    this.conn.unschedule(this);
    this.tenant.removeData(this);
  }
}

class RealmEventsSubscription implements LiveSubscription {
  private pending: SubscriptionUpdate[] = [];
  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly tenant: TenantLive,
    /** The subscriber: it hears of the realms it may read (a confined one: its realm only; `per`: realms it grants R in). */
    readonly principal: Principal,
  ) {}
  event(event: RealmChangedEvent): void {
    if (!realmAllows(this.principal, event.name, 'R')) return;
    this.pending.push({ kind: 'realmEvent', subscription: this.id, realm: event.name, act: event.act });
    this.conn.schedule(this);
  }
  drain(out: SubscriptionUpdate[]): void {
    for (const message of this.pending) out.push(message);
    this.pending = [];
  }
  detach(): void {
    this.pending = [];
    this.conn.unschedule(this);
    this.tenant.events.delete(this);
    this.tenant.release();
  }
}

type AreaChange = { kind: 'are'; area: Area } | { kind: 'del'; id: string };

/** One realm with object or area subscriptions here: its bus subscription and indexes. */
class RealmLive {
  readonly objects: RealmObjects;
  readonly areaSubs = new Set<AreaSubscription>();
  readonly tasks: RealmTasks;
  /** The realm's instruction and log subscriptions (null: none yet). */
  instructions: RealmInstructions | null = null;
  /** The realm's areas while it has area subscriptions (null: not loaded). */
  areaMap: Map<string, Area> | null = null;
  private areaLoad: Promise<void> | null = null;
  /** The changes heard during each read of the areas under way, replayed on what it read. */
  private readonly areaReads = new Set<AreaChange[]>();
  readonly bus: BusSubscription;

  constructor(
    readonly key: string,
    readonly owner: LiveSubscriptions,
    presence: PresenceLookup,
    objects: Pick<ObjectStore, 'list' | 'get'>,
    private readonly areas: Pick<AreaStore, 'list'>,
    tasks: Pick<TaskStore, 'list'>,
    onError: (err: unknown) => void,
  ) {
    this.objects = new RealmObjects({ realm: key, presence }, objects, onError);
    this.tasks = new RealmTasks(key, tasks, () => this.release());
    this.bus = owner.bus.subscribe(key, (message) => this.receive(message));
  }

  get empty(): boolean {
    return this.objects.size === 0 && this.areaSubs.size === 0 && this.tasks.size === 0 && (this.instructions?.size ?? 0) === 0;
  }

  /** The realm's instruction and log subscriptions, made at the first. */
  instructionsWith(feeds: InstructionFeeds): RealmInstructions {
    this.instructions ??= feeds.realm(this.key, () => this.release());
    return this.instructions;
  }

  /** Loads the realm's areas once (events meanwhile queue and are replayed). */
  areasReady(): Promise<void> {
    if (this.areaMap !== null) return Promise.resolve();
    this.areaLoad ??= this.loadAreas();
    return this.areaLoad;
  }

  private async loadAreas(): Promise<void> {
    try {
      this.areaMap = await this.readAreas();
    } finally {
      this.areaLoad = null;
    }
  }

  /** Every area of the realm, all pages, with the changes heard meanwhile replayed on them. */
  private async readAreas(): Promise<Map<string, Area>> {
    const heard: AreaChange[] = [];
    this.areaReads.add(heard);
    const map = new Map<string, Area>();
    try {
      let cursor: string | undefined;
      do {
        const page = await this.areas.list(this.key, cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor });
        for (const area of page.items) map.set(area.id, area);
        cursor = page.next ?? undefined;
      } while (cursor !== undefined);
    } finally {
      this.areaReads.delete(heard);
    }
    for (const change of heard) {
      if (change.kind === 'are') map.set(change.area.id, change.area);
      else map.delete(change.id);
    }
    return map;
  }

  /**
   * Reads the areas again (messages may have been lost); each subscriber that may read an
   * area that differs from the set it was pushed gets the whole set again.
   */
  async resyncAreas(): Promise<void> {
    // A first load under way may have read before the outage ended: read again after it.
    if (this.areaLoad !== null) await this.areaLoad.catch(() => undefined);
    if (this.areaMap === null) return;
    const fresh = await this.readAreas();
    const held = this.areaMap;
    if (held === null) return;
    const changed: string[] = [];
    for (const [id, area] of fresh) if (!isDeepStrictEqual(held.get(id), area)) changed.push(id);
    for (const id of held.keys()) if (!fresh.has(id)) changed.push(id);
    this.areaMap = fresh;
    if (changed.length === 0) return;
    for (const sub of this.areaSubs) if (sub.readable === null || changed.some(sub.readable)) sub.pushFull();
  }

  private areaChanged(change: AreaChange): void {
    for (const heard of this.areaReads) heard.push(change);
    if (this.areaMap === null) return;
    if (change.kind === 'are') this.areaMap.set(change.area.id, change.area);
    else if (!this.areaMap.delete(change.id)) return;
    // Subscribers that may not read the area do not hear of its change.
    const id = change.kind === 'are' ? change.area.id : change.id;
    for (const sub of this.areaSubs) if (sub.readable === null || sub.readable(id)) sub.pushFull();
  }

  private receive(message: RealmMessage): void {
    if (message.kind === 'realm_deleted') {
      this.owner.dropRealm(this);
      return;
    }
    let logs: LogEntry[] | null = null;
    for (const event of message.events) {
      switch (event.kind) {
        case 'object': {
          const after = event.change.new;
          if (after !== null) this.objects.written(after);
          else this.objects.deleted(event.change.id);
          break;
        }
        case 'area': {
          const after = event.change.new;
          this.areaChanged(after === null ? { kind: 'del', id: event.change.id } : { kind: 'are', area: after });
          break;
        }
        case 'cst':
          this.objects.statusChanged(event.object);
          break;
        case 'tsk':
          this.tasks.changed(event.change);
          break;
        case 'ins':
          this.instructions?.changed(event.id);
          break;
        case 'log':
          (logs ??= []).push(event.entry);
          break;
        default:
          break;
      }
    }
    if (this.instructions === null) return;
    if (logs !== null) this.instructions.logged(logs);
    this.instructions.settle();
  }

  /** Drops the realm when its last subscription went. */
  release(): void {
    if (this.areaSubs.size === 0) this.areaMap = null;
    if (this.empty) this.owner.releaseRealm(this);
  }
}

/** One tenant with realm-data or realm-event subscriptions here. */
class TenantLive {
  readonly events = new Set<RealmEventsSubscription>();
  readonly data = new Map<string, Set<RealmDataSubscription>>();
  readonly bus: BusSubscription;

  constructor(
    readonly tenant: string,
    readonly owner: LiveSubscriptions,
  ) {
    this.bus = owner.bus.subscribeTenant(tenant, (event) => this.receive(event));
  }

  addData(sub: RealmDataSubscription): void {
    let set = this.data.get(sub.realm.key);
    if (set === undefined) {
      set = new Set();
      this.data.set(sub.realm.key, set);
    }
    set.add(sub);
  }

  removeData(sub: RealmDataSubscription): void {
    const set = this.data.get(sub.realm.key);
    set?.delete(sub);
    if (set?.size === 0) this.data.delete(sub.realm.key);
    this.release();
  }

  private receive(event: RealmChangedEvent): void {
    for (const sub of this.events) sub.event(event);
    const set = this.data.get(event.realm);
    if (set === undefined) return;
    if (event.act === 'del') {
      for (const sub of [...set]) this.owner.dropSubscription(sub.conn, sub);
    } else if (event.act === 'upd' && event.record !== null) {
      for (const sub of set) sub.changed(event.record.label, event.record.data);
    }
  }

  release(): void {
    if (this.events.size === 0 && this.data.size === 0) this.owner.releaseTenant(this);
  }
}

type AnySubscription = ObjectSubscription | AreaSubscription | TaskSubscription | RealmDataSubscription | RealmEventsSubscription | InstructionsSubscription | LogSubscription;

export class LiveSubscriptions {
  readonly bus: EventBus;
  private readonly connections = new Map<SubscriberConnection, ConnectionLive>();
  private readonly realms = new Map<string, RealmLive>();
  private readonly tenants = new Map<string, TenantLive>();
  private readonly options = new WeakMap<LiveSubscription, SubscriptionOptions>();
  private readonly presence: PresenceLookup;
  private readonly onError: (err: unknown) => void;
  private readonly maxPerConnection: number;
  private readonly cycleMs: number;
  /** The resync under way or last run (settled), and the one queued after it. */
  private resyncTail: Promise<unknown> = Promise.resolve();
  private resyncQueued: Promise<number> | null = null;
  private readonly feeds: InstructionFeeds | null;

  constructor(
    private readonly deps: LiveDeps,
    private readonly limits: LiveOptions,
  ) {
    this.bus = deps.bus;
    this.presence = deps.presence ?? noPresence;
    this.onError = deps.onError ?? (() => undefined);
    this.maxPerConnection = limits.maxPerConnection ?? maxSubscriptionsPerConnection;
    this.cycleMs = limits.cycleMs ?? defaultCycleMs;
    const { instructions, logHistory } = deps;
    this.feeds = instructions === undefined ? null : new InstructionFeeds({ instructions, onError: this.onError, ...(logHistory === undefined ? {} : { logHistory }) });
  }

  /** What the options of a subscription here may hold (parsers check them before create and update). */
  get optionLimits(): OptionLimits {
    return this.limits;
  }

  /**
   * `sub` `cre`: replaces a subscription of the same id on this connection, loads the current
   * set and resolves once the subscription is live; with `exe` (`exe:true`) the set is pushed on
   * the next cycle. `realm` is null only for realm events, which watch the connection's tenant.
   */
  async create(connection: SubscriberConnection, id: string, realm: RealmRef | null, options: SubscriptionOptions, exe: boolean): Promise<void> {
    const conn = this.connectionOf(connection);
    const old = conn.subscriptions.get(id);
    if (old !== undefined) this.dropSubscription(conn, old);
    if (conn.subscriptions.size >= this.maxPerConnection) {
      throw tooLarge(`a connection may hold at most ${this.maxPerConnection} subscriptions; delete some first`);
    }
    let sub: AnySubscription;
    if (options.kind === 'realmEvents') {
      const tenant = this.tenantOf(connection.principal.tenant);
      sub = new RealmEventsSubscription(id, conn, tenant, connection.principal);
      tenant.events.add(sub);
    } else {
      if (realm === null) throw new LocusError('invalid_request', 'this subscription needs a realm in rea');
      if (options.kind === 'instructions' || options.kind === 'log') {
        const feeds = this.feedsOrRefuse(options.kind);
        const readable = readFilter(connection.principal, realm.name);
        const target = this.realmOf(realm.key).instructionsWith(feeds);
        sub = options.kind === 'instructions' ? feeds.instructions(id, conn, target, readable) : feeds.log(id, conn, target, readable);
      } else if (options.kind === 'realmData') {
        const tenant = this.tenantOf(realm.tenant);
        const data = new RealmDataSubscription(id, conn, tenant, realm);
        tenant.addData(data);
        sub = data;
        if (exe) data.pushCurrent();
      } else {
        const readable = readFilter(connection.principal, realm.name);
        if (options.kind === 'objects') checkTarget(readable, options);
        const live = this.realmOf(realm.key);
        if (options.kind === 'objects') {
          sub = new ObjectSubscription(id, conn, live.objects, options, readable);
        } else if (options.kind === 'tasks') {
          const task = new TaskSubscription(id, conn, live.tasks, readable);
          live.tasks.add(task);
          sub = task;
        } else {
          const area = new AreaSubscription(id, conn, live, readable);
          live.areaSubs.add(area);
          sub = area;
        }
      }
    }
    conn.subscriptions.set(id, sub);
    this.options.set(sub, options);
    try {
      if (sub instanceof ObjectSubscription) await sub.realm.add(sub, exe);
      else if (sub instanceof AreaSubscription) {
        await sub.realm.areasReady();
        if (exe) sub.pushFull();
      } else if (sub instanceof InstructionsSubscription || sub instanceof LogSubscription) {
        await this.feedsOrRefuse(options.kind === 'log' ? 'log' : 'instructions').start(sub, exe);
      } else if (sub instanceof TaskSubscription) {
        await sub.realm.ready();
        if (exe) sub.pushFull();
      }
    } catch (err) {
      if (conn.subscriptions.get(id) === sub) this.dropSubscription(conn, sub);
      throw err;
    }
  }

  /**
   * `sub` `upd` (compat 5.6): `next` makes the new options from the current ones (the partial
   * rule of transport/actions/subscription-options.ts; it throws to change nothing), then one
   * `ful` push of the whole new set on the next cycle (even when empty, even without `exe`).
   */
  async update(connection: SubscriberConnection, id: string, next: (current: SubscriptionOptions) => SubscriptionOptions): Promise<void> {
    const conn = this.connections.get(connection);
    const sub = conn?.subscriptions.get(id);
    if (conn === undefined || sub === undefined) throw unknownSubscription(id);
    const current = this.options.get(sub);
    if (current === undefined) throw unknownSubscription(id);
    const options = next(current);
    if (sub instanceof ObjectSubscription && options.kind === 'objects') checkTarget(sub.readable, options);
    this.options.set(sub, options);
    if (sub instanceof ObjectSubscription && options.kind === 'objects') {
      await sub.realm.reconfigure(sub, options);
    } else if (sub instanceof AreaSubscription) {
      await sub.realm.areasReady();
      sub.pushFull();
    } else if (sub instanceof TaskSubscription) {
      await sub.realm.ready();
      sub.pushFull();
    } else if (sub instanceof RealmDataSubscription) {
      sub.pushCurrent();
    } else if (sub instanceof InstructionsSubscription) {
      // Read afresh: what the subscriber gets now is the store's map, not a copy that may lag.
      await sub.realm.resync();
      sub.pushFull();
    }
  }

  /** `sub` `del`: ends the subscription; nothing it had queued is pushed. */
  delete(connection: SubscriberConnection, id: string): void {
    const conn = this.connections.get(connection);
    const sub = conn?.subscriptions.get(id);
    if (conn === undefined || sub === undefined) throw unknownSubscription(id);
    this.dropSubscription(conn, sub);
  }

  /**
   * Messages may have been lost (EventBus.onResync): reads every subscription here again from
   * the store and pushes the differences (see the top of this file). Resolves with the
   * number of subscriptions read again. A call while one runs queues one more run after it
   * (the reads under way may have begun before the reason for this call); calls meanwhile
   * share that run.
   */
  resync(): Promise<number> {
    if (this.resyncQueued !== null) return this.resyncQueued;
    const run = this.resyncTail.then(() => {
      this.resyncQueued = null;
      return this.resyncAll();
    });
    this.resyncQueued = run;
    this.resyncTail = run.catch(() => undefined);
    return run;
  }

  private async resyncAll(): Promise<number> {
    const realmChecks: (() => Promise<void>)[] = [];
    /** Object and area subscriptions of the realms that still exist, read again once every realm is checked. */
    const reads: (() => Promise<void>)[] = [];
    let count = 0;
    for (const live of this.realms.values()) {
      count += live.objects.size + live.areaSubs.size + live.tasks.size + (live.instructions?.size ?? 0);
      realmChecks.push(() => this.checkRealm(live, reads));
    }
    for (const tenant of this.tenants.values()) {
      for (const [key, subs] of tenant.data) {
        count += subs.size;
        realmChecks.push(() => this.resyncRealmData(key, subs));
      }
    }
    await runAll(realmChecks, resyncConcurrency, this.onError);
    await runAll(reads, resyncConcurrency, this.onError);
    return count;
  }

  /** One realm's object and area subscriptions: all end if the realm is gone, else each is queued in `reads`. */
  private async checkRealm(live: RealmLive, reads: (() => Promise<void>)[]): Promise<void> {
    const realm = await this.deps.realms.get(live.key);
    if (this.realms.get(live.key) !== live) return;
    if (realm === null) {
      this.dropRealm(live);
      return;
    }
    for (const sub of live.objects.subscriptions()) reads.push(() => live.objects.resync(sub));
    if (live.areaSubs.size > 0) reads.push(() => live.resyncAreas());
    if (live.tasks.size > 0) reads.push(() => live.tasks.resync());
    const { instructions } = live;
    if (instructions !== null && instructions.instructionSubs.size > 0) reads.push(() => instructions.resync());
  }

  /** Realm data subscriptions of one realm: they end if it is gone, else push it if it differs. */
  private async resyncRealmData(key: string, subs: ReadonlySet<RealmDataSubscription>): Promise<void> {
    const realm = await this.deps.realms.get(key);
    for (const sub of [...subs]) {
      if (sub.conn.subscriptions.get(sub.id) !== sub) continue;
      if (realm === null) this.dropSubscription(sub.conn, sub);
      else if (realm.label !== sub.realm.label || !isDeepStrictEqual(realm.data, sub.realm.data)) sub.changed(realm.label, realm.data);
    }
  }

  /** Subscriptions held (for tests and diagnostics). */
  count(): number {
    let n = 0;
    for (const conn of this.connections.values()) n += conn.subscriptions.size;
    return n;
  }

  /** Realms and tenants with a bus subscription here (for tests: they are released). */
  held(): { realms: number; tenants: number; connections: number } {
    return { realms: this.realms.size, tenants: this.tenants.size, connections: this.connections.size };
  }

  // --- internals (used by the per-realm and per-tenant holders) ------------------------

  dropSubscription(conn: ConnectionLive, sub: LiveSubscription): void {
    if (conn.subscriptions.get(sub.id) === sub) conn.subscriptions.delete(sub.id);
    sub.detach();
    if (sub instanceof ObjectSubscription) {
      const live = this.realms.get(sub.realm.render.realm);
      live?.release();
    }
  }

  dropRealm(live: RealmLive): void {
    for (const sub of live.objects.subscriptions()) this.dropSubscription(sub.conn, sub);
    for (const sub of [...live.areaSubs]) this.dropSubscription(sub.conn, sub);
    for (const sub of [...live.tasks.subs]) this.dropSubscription(sub.conn, sub);
    for (const sub of [...(live.instructions?.instructionSubs ?? [])]) this.dropSubscription(sub.conn, sub);
    for (const sub of [...(live.instructions?.logSubs ?? [])]) this.dropSubscription(sub.conn, sub);
    this.releaseRealm(live);
  }

  releaseRealm(live: RealmLive): void {
    if (this.realms.get(live.key) !== live) return;
    this.realms.delete(live.key);
    live.bus.unsubscribe();
  }

  releaseTenant(tenant: TenantLive): void {
    if (this.tenants.get(tenant.tenant) !== tenant) return;
    this.tenants.delete(tenant.tenant);
    tenant.bus.unsubscribe();
  }

  private connectionOf(connection: SubscriberConnection): ConnectionLive {
    let conn = this.connections.get(connection);
    if (conn === undefined) {
      const created = new ConnectionLive(connection, this.cycleMs);
      this.connections.set(connection, created);
      connection.onClose(() => {
        this.connections.delete(connection);
        created.close();
        for (const sub of [...created.subscriptions.values()]) this.dropSubscription(created, sub);
      });
      conn = created;
    }
    return conn;
  }

  private feedsOrRefuse(kind: 'instructions' | 'log'): InstructionFeeds {
    if (this.feeds === null) throw new LocusError('not_implemented', `subscriptions of dat.typ "${kind === 'log' ? 'log' : 'ins'}" are not supported by this server`);
    return this.feeds;
  }

  private realmOf(key: string): RealmLive {
    let live = this.realms.get(key);
    if (live === undefined) {
      live = new RealmLive(key, this, this.presence, this.deps.objects, this.deps.areas, this.deps.tasks, this.onError);
      this.realms.set(key, live);
    }
    return live;
  }

  private tenantOf(tenant: string): TenantLive {
    let live = this.tenants.get(tenant);
    if (live === undefined) {
      live = new TenantLive(tenant, this);
      this.tenants.set(tenant, live);
    }
    return live;
  }
}
