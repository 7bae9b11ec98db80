/**
 * The SQLite adapter of the store port (embedded mode), on better-sqlite3.
 *
 * One database file holds every realm. Statements are prepared once per store; every
 * multi-statement operation runs in one transaction. Write transactions begin IMMEDIATE:
 * they read before they write, and SQLite fails a read transaction that then needs the
 * write lock another process (the admin CLI) holds at once, without the busy timeout.
 * Merge rules are the domain's
 * (foldPatches, applyPatch, applyAreaPatch): the adapter reads the old state, applies
 * them and writes the result. better-sqlite3 is synchronous, so each operation runs to
 * completion before its promise settles, and transactions never interleave.
 */
import Database from 'better-sqlite3';
import type { Statement, Transaction } from 'better-sqlite3';
import { areaExists, LocusError, notFound, realmExists } from '../../errors.js';
import { applyAreaPatch } from '../../domain/area.js';
import { instructionLeaseName } from '../../domain/instruction-update.js';
import { applyRealmPatch } from '../../domain/realm-entity.js';
import { splitRealmKey } from '../../domain/realm-key.js';
import type { Area, AreaChange, AreaCreate, AreaPatch, Realm, RealmPatch, RealmSettings, TokenRecord } from '../../domain/types.js';
import type { AreaListQuery, AreaStore, InstructionStore, Page, RealmStore, SigningKeyStore, Store, TaskStore, TenantStore, TokenStore } from '../port.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Checkpointer } from './checkpointer.js';
import { DELETE_REALM_INSTRUCTIONS_SQL, SqliteInstructionStore } from './instruction-store.js';
import { leaseFilePath, SqliteLeaseStore } from './lease-file.js';
import { SqliteObjectStore, pageStart, toPage, type ObjectStoreOptions } from './object-store.js';
import { purgeRealmIndexes } from './realm-purge.js';
import { areaFromRow, realmFromRow, tokenFromRow, type AreaRow, type RealmRow, type TokenRow } from './rows.js';
import { configure, migrate } from './schema.js';
import { dropIndexes, syncIndexes } from './filter-indexes.js';
import { SearchIndexer } from './search-indexer.js';
import { isUniqueViolation, settle } from './sqlite-errors.js';
import { SqliteTaskStore } from './task-store.js';
import { SqliteSigningKeyStore, SqliteTenantStore } from './tenant-store.js';

type Db = Database.Database;

class SqliteRealmStore implements RealmStore {
  private readonly selectOne: Statement<[string], RealmRow>;
  private readonly selectAll: Statement<[], RealmRow>;
  private readonly selectTenant: Statement<[string], RealmRow>;
  private readonly insert: Statement<[string, string, string, string | null, string, string, string]>;
  private readonly putTx: Transaction<(id: string, settings: RealmSettings, now: string) => { realm: Realm; created: boolean }>;
  private readonly updateTx: Transaction<(id: string, patch: RealmPatch) => Realm | null>;
  private readonly deleteTx: Transaction<(id: string) => { existed: boolean; queued: [number, number] | null }>;

  /** `deleting` runs before a realm delete (writes queued for it go first), `deleted` after it has committed. */
  constructor(
    db: Db,
    private readonly indexer: SearchIndexer,
    private readonly deleting: () => void,
    private readonly deleted: (realm: string) => void,
  ) {
    const columns = 'id, tenant, name, label, data, settings, created';
    this.selectOne = db.prepare<[string], RealmRow>(`SELECT ${columns} FROM realms WHERE id = ?`);
    this.selectAll = db.prepare<[], RealmRow>(`SELECT ${columns} FROM realms ORDER BY id`);
    this.selectTenant = db.prepare<[string], RealmRow>(`SELECT ${columns} FROM realms WHERE tenant = ? ORDER BY name`);
    this.insert = db.prepare(`INSERT INTO realms (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const updateSettings = db.prepare<[string, string]>('UPDATE realms SET settings = ? WHERE id = ?');
    const updateEntity = db.prepare<[string | null, string, string]>('UPDATE realms SET label = ?, data = ? WHERE id = ?');
    const deleteRealmData = [
      'DELETE FROM history WHERE orow IN (SELECT rowid FROM objects WHERE realm = ?)',
      'DELETE FROM snapshots WHERE orow IN (SELECT rowid FROM objects WHERE realm = ?)',
      'DELETE FROM objects WHERE realm = ?',
      'DELETE FROM areas WHERE realm = ?',
      'DELETE FROM tasks WHERE realm = ?',
      'DELETE FROM tokens WHERE realm = ?',
      ...DELETE_REALM_INSTRUCTIONS_SQL,
    ].map((sql) => db.prepare<[string]>(sql));
    const deleteRealm = db.prepare<[string]>('DELETE FROM realms WHERE id = ?');
    // A realm-bound signing key goes with its realm, as its tokens do.
    const deleteBoundKeys = db.prepare<[string, string]>('DELETE FROM signing_keys WHERE tenant = ? AND realm = ?');

    this.putTx = db.transaction((id: string, settings: RealmSettings, now: string) => {
      const existing = this.selectOne.get(id);
      const json = JSON.stringify(settings);
      if (existing === undefined) {
        const { tenant, name } = splitRealmKey(id);
        this.insert.run(id, tenant, name, null, '{}', json, now);
        syncIndexes(db, id, settings.filterIndexes ?? []);
        return { realm: { id, tenant, name, label: null, data: {}, settings, created: now }, created: true };
      }
      updateSettings.run(json, id);
      // With the settings, in their transaction: the realm's filter indexes.
      syncIndexes(db, id, settings.filterIndexes ?? []);
      return { realm: { ...realmFromRow(existing), settings }, created: false };
    });
    this.updateTx = db.transaction((id: string, patch: RealmPatch) => {
      const row = this.selectOne.get(id);
      if (row === undefined) return null;
      const old = realmFromRow(row);
      const next = applyRealmPatch(old, patch);
      updateEntity.run(next.label, next.data === old.data ? row.data : JSON.stringify(next.data), id);
      return next;
    });
    this.deleteTx = db.transaction((id: string) => {
      // The realm's index entries first (in bulk), then its rows (the delete trigger then skips them).
      const queued = purgeRealmIndexes(db, this.indexer, id);
      dropIndexes(db, id);
      for (const statement of deleteRealmData) statement.run(id);
      const { tenant, name } = splitRealmKey(id);
      deleteBoundKeys.run(tenant, name);
      return { existed: deleteRealm.run(id).changes > 0, queued };
    });
  }

  put(id: string, settings: RealmSettings, now: string): Promise<{ realm: Realm; created: boolean }> {
    return settle(() => this.putTx.immediate(id, settings, now));
  }

  create(realm: Realm): Promise<Realm> {
    return settle(() => {
      try {
        this.insert.run(realm.id, realm.tenant, realm.name, realm.label, JSON.stringify(realm.data), JSON.stringify(realm.settings), realm.created);
      } catch (err) {
        if (isUniqueViolation(err)) throw realmExists(realm.name, err);
        throw err;
      }
      return realm;
    });
  }

  update(id: string, patch: RealmPatch): Promise<Realm | null> {
    return settle(() => this.updateTx.immediate(id, patch));
  }

  get(id: string): Promise<Realm | null> {
    return settle(() => {
      const row = this.selectOne.get(id);
      return row === undefined ? null : realmFromRow(row);
    });
  }

  list(tenant?: string): Promise<Realm[]> {
    return settle(() => (tenant === undefined ? this.selectAll.all() : this.selectTenant.all(tenant)).map(realmFromRow));
  }

  delete(id: string): Promise<boolean> {
    return settle(() => {
      this.deleting();
      const { existed, queued } = this.deleteTx.immediate(id);
      if (queued !== null) this.indexer.queued(queued[0], queued[1]);
      this.deleted(id);
      return existed;
    });
  }
}

/** Tokens. Lookups are not held here: auth/held-lookups.ts holds them, told of revocations by control messages. */
class SqliteTokenStore implements TokenStore {
  private readonly insert: Statement<[string, string, string, string, string]>;
  private readonly selectByHash: Statement<[string], TokenRow>;
  private readonly selectByRealm: Statement<[string], TokenRow>;
  private readonly deleteOne: Statement<[string, string]>;

  constructor(db: Db) {
    const columns = 'id, realm, hash, scope, created';
    this.insert = db.prepare(`INSERT INTO tokens (${columns}) VALUES (?, ?, ?, ?, ?)`);
    this.selectByHash = db.prepare(`SELECT ${columns} FROM tokens WHERE hash = ?`);
    this.selectByRealm = db.prepare(`SELECT ${columns} FROM tokens WHERE realm = ? ORDER BY created, id`);
    this.deleteOne = db.prepare('DELETE FROM tokens WHERE realm = ? AND id = ?');
  }

  create(token: TokenRecord): Promise<void> {
    return settle(() => {
      try {
        this.insert.run(token.id, token.realm, token.hash, token.scope, token.created);
      } catch (err) {
        if (isUniqueViolation(err)) throw new LocusError('conflict', 'token already exists', { cause: err });
        throw err;
      }
    });
  }

  findByHash(hash: string): Promise<TokenRecord | null> {
    return settle(() => {
      const row = this.selectByHash.get(hash);
      return row === undefined ? null : tokenFromRow(row);
    });
  }

  listByRealm(realm: string): Promise<TokenRecord[]> {
    return settle(() => this.selectByRealm.all(realm).map(tokenFromRow));
  }

  delete(realm: string, id: string): Promise<boolean> {
    return settle(() => this.deleteOne.run(realm, id).changes > 0);
  }
}

class SqliteAreaStore implements AreaStore {
  private readonly selectOne: Statement<[string, string], AreaRow>;
  private readonly selectPage: Statement<[string, string, number], AreaRow>;
  private readonly insert: Statement<[string, string, string | null, string, string]>;
  private readonly updateTx: Transaction<(realm: string, id: string, patch: AreaPatch) => AreaChange>;
  private readonly deleteTx: Transaction<(realm: string, id: string) => AreaChange | null>;

  constructor(db: Db) {
    const columns = 'id, label, shape, data';
    this.selectOne = db.prepare(`SELECT ${columns} FROM areas WHERE realm = ? AND id = ?`);
    this.selectPage = db.prepare(`SELECT ${columns} FROM areas WHERE realm = ? AND id > ? ORDER BY id LIMIT ?`);
    this.insert = db.prepare('INSERT INTO areas (realm, id, label, shape, data) VALUES (?, ?, ?, ?, ?)');
    const update = db.prepare<[string | null, string, string, string, string]>(
      'UPDATE areas SET label = ?, shape = ?, data = ? WHERE realm = ? AND id = ?',
    );
    const deleteOne = db.prepare<[string, string]>('DELETE FROM areas WHERE realm = ? AND id = ?');

    this.updateTx = db.transaction((realm: string, id: string, patch: AreaPatch) => {
      const row = this.selectOne.get(realm, id);
      if (row === undefined) throw notFound(`area ${id} not found`);
      const old = areaFromRow(row);
      const next = applyAreaPatch(old, patch);
      const shapeJson = next.shape === old.shape ? row.shape : JSON.stringify(next.shape);
      const dataJson = next.data === old.data ? row.data : JSON.stringify(next.data);
      update.run(next.label, shapeJson, dataJson, realm, id);
      const change: AreaChange = { realm, id, old, new: next };
      return change;
    });

    this.deleteTx = db.transaction((realm: string, id: string) => {
      const row = this.selectOne.get(realm, id);
      if (row === undefined) return null;
      deleteOne.run(realm, id);
      const change: AreaChange = { realm, id, old: areaFromRow(row), new: null };
      return change;
    });
  }

  create(realm: string, area: AreaCreate): Promise<AreaChange> {
    return settle(() => {
      try {
        this.insert.run(realm, area.id, area.label, JSON.stringify(area.shape), JSON.stringify(area.data));
      } catch (err) {
        if (isUniqueViolation(err)) throw areaExists(area.id, err);
        throw err;
      }
      const created: Area = { id: area.id, label: area.label, shape: area.shape, data: area.data };
      const change: AreaChange = { realm, id: area.id, old: null, new: created };
      return change;
    });
  }

  update(realm: string, id: string, patch: AreaPatch): Promise<AreaChange> {
    return settle(() => this.updateTx.immediate(realm, id, patch));
  }

  get(realm: string, id: string): Promise<Area | null> {
    return settle(() => {
      const row = this.selectOne.get(realm, id);
      return row === undefined ? null : areaFromRow(row);
    });
  }

  list(realm: string, query: AreaListQuery): Promise<Page<Area>> {
    return settle(() => {
      const after = pageStart(query);
      return toPage(this.selectPage.all(realm, after, query.limit + 1), query.limit, areaFromRow, (row) => row.id);
    });
  }

  delete(realm: string, id: string): Promise<AreaChange | null> {
    return settle(() => this.deleteTx.immediate(realm, id));
  }
}

export class SqliteStore implements Store {
  readonly realms: RealmStore;
  readonly tokens: TokenStore;
  readonly tenants: TenantStore;
  readonly signingKeys: SigningKeyStore;
  readonly objects: SqliteObjectStore;
  readonly areas: AreaStore;
  readonly instructions: InstructionStore;
  readonly leases: SqliteLeaseStore;
  readonly tasks: TaskStore;
  private readonly db: Db;
  private readonly pingStatement: Statement<[], unknown>;
  /** WAL checkpoints on a worker thread. */
  private readonly checkpointer: Checkpointer;
  /** The full-text index, kept current on a worker thread. */
  private readonly indexer: SearchIndexer;
  /** The temporary directory of a `:memory:` store, removed on close. */
  private readonly scratch: string | null;
  /** Other processes write the file too (ObjectStoreOptions.ownership). */
  private readonly shared: boolean;

  /**
   * Opens (creating when missing) the database at `path`. `:memory:` gives a throwaway
   * store: a database in a new temporary directory, removed on close (the search
   * indexer's thread reads the database, which an in-memory one would not allow).
   */
  constructor(path: string, options: ObjectStoreOptions = {}) {
    this.scratch = path === ':memory:' ? mkdtempSync(join(tmpdir(), 'locus-store-')) : null;
    this.shared = options.ownership === 'shared';
    const file = this.scratch === null ? path : join(this.scratch, 'locus.db');
    const db = new Database(file);
    let leases: SqliteLeaseStore | null = null;
    try {
      configure(db);
      migrate(db);
      const leaseFile = new SqliteLeaseStore(leaseFilePath(file));
      leases = leaseFile;
      this.leases = leaseFile;
      this.indexer = new SearchIndexer(db, file, options.onIndexerError, options.indexerBacklog);
      const objects = new SqliteObjectStore(db, this.indexer, options);
      this.objects = objects;
      this.tokens = new SqliteTokenStore(db);
      this.realms = new SqliteRealmStore(
        db,
        this.indexer,
        () => objects.flushWrites(),
        (realm) => {
          objects.forgetRealm(realm);
          // Its instructions went in the delete's transaction; its lease is in a file of its own (lease-file.ts).
          leaseFile.remove(instructionLeaseName(realm));
        },
      );
      this.areas = new SqliteAreaStore(db);
      this.tasks = new SqliteTaskStore(db);
      this.signingKeys = new SqliteSigningKeyStore(db);
      this.tenants = new SqliteTenantStore(db);
      this.instructions = new SqliteInstructionStore(db);
      this.pingStatement = db.prepare('SELECT 1');
      this.checkpointer = new Checkpointer(db, file);
      // The spatial index of every realm, built in the background (location-index.ts).
      void objects.locations.warm();
    } catch (err) {
      leases?.close();
      db.close();
      if (this.scratch !== null) rmSync(this.scratch, { recursive: true, force: true });
      throw err;
    }
    this.db = db;
  }

  ping(): Promise<void> {
    return settle(() => {
      if (!this.db.open) throw new LocusError('unavailable', 'store is closed');
      this.pingStatement.get();
    });
  }

  /** Checkpoints the WAL into the main file and closes the database. Closing twice is a no-op. */
  async close(): Promise<void> {
    if (!this.db.open) return;
    // Writes queued for the next group commit are written first.
    this.objects.flushWrites();
    await Promise.all([this.checkpointer.stop(), this.indexer.stop()]);
    return settle(() => {
      if (!this.db.open) return;
      try {
        // Shared (store-owner.ts): the others go on writing; TRUNCATE would wait for them.
        this.db.pragma(this.shared ? 'wal_checkpoint(PASSIVE)' : 'wal_checkpoint(TRUNCATE)');
      } finally {
        this.db.close();
        this.leases.close();
        if (this.scratch !== null) rmSync(this.scratch, { recursive: true, force: true });
      }
    });
  }
}

export function openSqliteStore(path: string, options: ObjectStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
