/**
 * The store port: everything the services need from persistence. The SQLite adapter
 * (embedded mode) and the MongoDB adapter (cluster mode) both implement it, and one
 * contract test suite (test/contract/store-contract.ts) is run against each.
 *
 * Adapters translate their own errors into LocusError once (unique violation ->
 * `conflict`, and so on). Merge rules are not the adapter's: it reads the old state,
 * calls the pure functions of internal/domain and writes the result atomically.
 */
import type {
  Area,
  Data,
  FilterCondition,
  Location,
  Shape,
  AreaChange,
  AreaCreate,
  AreaPatch,
  ObjectChange,
  ObjectPatch,
  Realm,
  RealmPatch,
  RealmSettings,
  SigningKeyRecord,
  TenantRecord,
  TokenRecord,
  TrackedObject,
} from '../domain/types.js';
import type { InstructionPatch, InstructionRecord, Lease, MembershipChange, PendingAction } from '../domain/instruction.js';
import type { TaskChange, TaskPatch, TaskRecord } from '../domain/task.js';

export interface Page<T> {
  items: T[];
  /** Opaque cursor for the next page, or null when this page is the last. */
  next: string | null;
}

export interface ObjectListQuery {
  /** 1..10000 */
  limit: number;
  /** A cursor returned by a previous page. */
  cursor?: string;
  /** All conditions must hold: exactly domain/filter.ts matchesFilter. */
  filter?: FilterCondition[];
  /** Only objects whose current location is inside: exactly internal/geo containsPoint. */
  shape?: Shape;
  /**
   * Projection: when given, each item carries `id`, `label` and `seen` as stored,
   * `location: null`, and `data` holding only those of these fields the object has
   * (null: `{}`), so that adapters need not read or decode the rest. When absent, items
   * are whole objects.
   */
  fields?: string[] | null;
}

export interface SearchQuery {
  /** Normalised query words (domain/search.ts parseSearchQuery); each must prefix a word of the object. */
  words: string[];
  /** 1..10000 */
  limit: number;
  /** Projection, as in ObjectListQuery. */
  fields?: string[] | null;
}

export interface SearchHit {
  object: TrackedObject;
  /** Higher is better. */
  score: number;
}

export interface HistoryQuery {
  /** Inclusive bounds, normalised ISO times. */
  from?: string;
  to?: string;
  /** 1..10000 */
  limit: number;
  /** A cursor returned by a previous page of the same history query. */
  cursor?: string;
  order: 'asc' | 'desc';
}

/**
 * One entry of an object's history: a stored fix with the object's label and data as the
 * write that stored it left them (hivekit-compat.md 7.1). Entries of one object share
 * their data objects when equal: never mutate them.
 */
export interface HistoryEntry {
  location: Location;
  label: string | null;
  data: Data;
}

export interface AreaListQuery {
  limit: number;
  cursor?: string;
}

/**
 * Realms. A realm's `label` (string or null) and `data` (any JSON object, nested values
 * included) read back exactly as written: the same keys in the same order, the same values.
 * A realm stored before labels and data existed reads as label null and data {}.
 */
export interface RealmStore {
  /**
   * Creates the realm (label null, data {}; tenant and name from the key, domain/realm-key.ts
   * splitRealmKey), or replaces its settings when it exists (its label and data stay).
   */
  put(id: string, settings: RealmSettings, now: string): Promise<{ realm: Realm; created: boolean }>;
  /**
   * Creates the realm as given; `conflict` (errors.ts realmExists) when it exists, checked
   * by the write itself, so that of two creators only one wins.
   */
  create(realm: Realm): Promise<Realm>;
  /**
   * Applies a label and data update (domain applyRealmPatch) to the realm as stored, in one
   * write: concurrent updates of different keys all take effect. Null when the realm does not
   * exist. Settings and created stay. When applyRealmPatch refuses, nothing changes.
   */
  update(id: string, patch: RealmPatch): Promise<Realm | null>;
  get(id: string): Promise<Realm | null>;
  /** Every realm (by key), or, with a tenant, that tenant's realms (by name). */
  list(tenant?: string): Promise<Realm[]>;
  /** Deletes the realm with all its objects, areas, history and tokens. False when it did not exist. */
  delete(id: string): Promise<boolean>;
}

export interface TokenStore {
  create(token: TokenRecord): Promise<void>;
  findByHash(hash: string): Promise<TokenRecord | null>;
  listByRealm(realm: string): Promise<TokenRecord[]>;
  /** False when the realm has no such token. */
  delete(realm: string, id: string): Promise<boolean>;
}

/**
 * Tenants. The default tenant (auth/principal.ts defaultTenant) always exists: a new store
 * holds it, and it cannot be deleted.
 */
export interface TenantStore {
  /** `conflict` when the id exists. */
  create(tenant: TenantRecord): Promise<TenantRecord>;
  get(id: string): Promise<TenantRecord | null>;
  /** In id order. */
  list(): Promise<TenantRecord[]>;
  /**
   * Deletes the tenant and its signing keys; `conflict` while it owns realms (nothing
   * changes), and for the default tenant. False when it did not exist.
   */
  delete(id: string): Promise<boolean>;
}

/** JWT signing keys. Lookups by id are the hot path (every JWT sign-in): adapters may hold them, as long as a delete takes effect at once. */
export interface SigningKeyStore {
  /** `conflict` when the id exists. */
  create(key: SigningKeyRecord): Promise<void>;
  get(id: string): Promise<SigningKeyRecord | null>;
  /** The tenant's keys, oldest first. */
  listByTenant(tenant: string): Promise<SigningKeyRecord[]>;
  /** False when the tenant has no such key. */
  delete(tenant: string, id: string): Promise<boolean>;
}

export interface ObjectStore {
  /**
   * Applies a batch of patches atomically (all or nothing), in array order; several
   * patches of one id are that object's history (see domain/object.ts foldPatches).
   * `now` is the server receive time. Returns one change per distinct id, in the
   * order the ids first appear. The realm need not have been put (services check that);
   * but once this store has deleted it, a write for it fails with `not_found` until it
   * is put again, so that a write that waited through the delete leaves no rows behind.
   * Each call need only be correct on its own: the service never has two writes of the
   * same object under way at once, while calls writing different objects may overlap (the
   * ordering contract: service/write-order.ts). The `old` of a change is the object as the write found it.
   * An id whose first patch has `mustExist` and that does not exist is skipped: no change.
   * Task ids: the last given in the batch replace the object's ([] clears them); objects
   * are read back with `tasks` only when they have some (lists with a projection: never).
   */
  upsertMany(realm: string, patches: ObjectPatch[], now: string): Promise<ObjectChange[]>;
  get(realm: string, id: string): Promise<TrackedObject | null>;
  /** Objects in id order (Unicode code point order). */
  list(realm: string, query: ObjectListQuery): Promise<Page<TrackedObject>>;
  /** Deletes the object and its history; null when it did not exist. */
  delete(realm: string, id: string, now: string): Promise<ObjectChange | null>;
  /**
   * Objects matching every query word as a prefix of one of their words (the words of
   * domain/search.ts: matchesSearch decides), best matches first, at most `limit`.
   * Adapters rank by their text index (SQLite: FTS5 bm25). Equal scores follow id order
   * among the returned hits; which of several equally scored objects make the cut at the
   * limit is up to the adapter.
   */
  search(realm: string, query: SearchQuery): Promise<SearchHit[]>;
  /**
   * The object's stored fixes within [from, to] (fix times), in time order (`desc`: newest
   * first), paged by `limit` and `cursor`, each with the label and data the object had
   * after the write that stored it (a batch: after the whole batch; a later write of an
   * equal fix time replaces the fix and its snapshot). Writes without a location add no
   * entry. An object without history (or that does not exist) gives an empty page: the
   * caller checks existence.
   */
  history(realm: string, id: string, query: HistoryQuery): Promise<Page<HistoryEntry>>;
  /**
   * Deletes the realm's fixes whose time is before `before` (normalised ISO), with the
   * snapshots only they named; returns how many fixes. May run as several short transactions; stops early (between them) once
   * `signal` is aborted.
   */
  pruneHistory(realm: string, before: string, options?: { signal?: AbortSignal }): Promise<number>;
}

export interface AreaStore {
  /** Throws `conflict` when the id exists. */
  create(realm: string, area: AreaCreate): Promise<AreaChange>;
  /** Throws `not_found` when missing. Merge rules from domain/area.ts. */
  update(realm: string, id: string, patch: AreaPatch): Promise<AreaChange>;
  get(realm: string, id: string): Promise<Area | null>;
  /** Areas in id order. */
  list(realm: string, query: AreaListQuery): Promise<Page<Area>>;
  /** Null when it did not exist. */
  delete(realm: string, id: string): Promise<AreaChange | null>;
}

/**
 * Instructions and the engine's state for them (domain/instruction.ts). Membership and pending
 * actions change together, in one transaction (applyMembership), so a process that dies never
 * leaves one without the other.
 */
export interface InstructionStore {
  /** Throws `instructionExists` (409) for an existing id. */
  create(realm: string, record: InstructionRecord): Promise<void>;
  get(realm: string, id: string): Promise<InstructionRecord | null>;
  /** In creation order. */
  list(realm: string): Promise<InstructionRecord[]>;
  count(realm: string): Promise<number>;
  /** Null when there is no such instruction. A new source bumps the generation and drops its membership and pending actions in the same transaction. */
  update(realm: string, id: string, patch: InstructionPatch, now: string): Promise<InstructionRecord | null>;
  /** Drops its membership and pending actions too. */
  delete(realm: string, id: string): Promise<boolean>;
  /** The realms (storage keys) that hold at least one instruction. */
  realmsWithInstructions(): Promise<string[]>;
  /** The entry keys currently in the instruction's `when` set (of its current generation). */
  members(realm: string, id: string): Promise<string[]>;
  /**
   * Applies membership changes and adds the pending actions they cause, atomically; a change
   * whose generation is no longer the instruction's is skipped (with its actions).
   */
  applyMembership(realm: string, changes: readonly MembershipChange[], actions: readonly PendingAction[]): Promise<void>;
  /** Pending actions of the realm, oldest first (at most `limit`). */
  pending(realm: string, limit: number): Promise<PendingAction[]>;
  /** Removes carried-out (or abandoned) actions by key. */
  completePending(realm: string, keys: readonly string[]): Promise<void>;
  /** Records another attempt of a pending action. */
  recordAttempt(realm: string, key: string): Promise<void>;
}

/** Expiring named leases held in the store: one holder at a time, taken over once expired. */
export interface LeaseStore {
  /**
   * Takes or renews the lease for `holder` until now + ttlMs when it is free, expired or already
   * the holder's; returns the lease as it stands afterwards (someone else's when not taken).
   */
  acquire(name: string, holder: string, ttlMs: number, now: string): Promise<Lease>;
  /** Gives the lease up if `holder` holds it. */
  release(name: string, holder: string): Promise<void>;
}

/** Tasks (domain/task.ts). */
export interface TaskStore {
  /** Throws a 409 conflict for an existing id. */
  create(realm: string, task: TaskRecord): Promise<TaskChange>;
  /** Null when there is no such task. */
  update(realm: string, id: string, patch: TaskPatch, now: string): Promise<TaskChange | null>;
  get(realm: string, id: string): Promise<TaskRecord | null>;
  /** In creation order. */
  list(realm: string): Promise<TaskRecord[]>;
  delete(realm: string, id: string): Promise<TaskChange | null>;
}

export interface Store {
  readonly realms: RealmStore;
  readonly tokens: TokenStore;
  readonly tenants: TenantStore;
  readonly signingKeys: SigningKeyStore;
  readonly objects: ObjectStore;
  readonly areas: AreaStore;
  readonly instructions: InstructionStore;
  readonly leases: LeaseStore;
  readonly tasks: TaskStore;
  /** Resolves when the store can serve requests (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
