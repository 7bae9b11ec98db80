/**
 * Tenants and their JWT signing keys in SQLite (schema version 12). Signing keys hold the
 * HMAC secret itself (verification needs it): never logged, never listed by the services.
 * Lookups are not held here: auth/held-lookups.ts holds them, told of changes by control messages.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { defaultTenant } from '../../auth/principal.js';
import type { SigningKeyRecord, TenantRecord } from '../../domain/types.js';
import { conflict } from '../../errors.js';
import type { SigningKeyStore, TenantStore } from '../port.js';
import { isUniqueViolation, settle } from './sqlite-errors.js';

interface KeyRow {
  id: string;
  tenant: string;
  realm: string | null;
  secret: string;
  created: string;
}

export class SqliteTenantStore implements TenantStore {
  private readonly insert: Statement<[string, string | null, string]>;
  private readonly selectOne: Statement<[string], TenantRecord>;
  private readonly selectAll: Statement<[], TenantRecord>;
  private readonly deleteTx: Transaction<(id: string) => boolean>;

  constructor(db: Database) {
    this.insert = db.prepare('INSERT INTO tenants (id, label, created) VALUES (?, ?, ?)');
    this.selectOne = db.prepare('SELECT id, label, created FROM tenants WHERE id = ?');
    this.selectAll = db.prepare('SELECT id, label, created FROM tenants ORDER BY id');
    const hasRealms = db.prepare<[string], number>('SELECT 1 FROM realms WHERE tenant = ? LIMIT 1').pluck();
    const deleteKeys = db.prepare<[string]>('DELETE FROM signing_keys WHERE tenant = ?');
    const deleteOne = db.prepare<[string]>('DELETE FROM tenants WHERE id = ?');
    this.deleteTx = db.transaction((id: string) => {
      if (id === defaultTenant) throw conflict('the default tenant cannot be deleted');
      if (this.selectOne.get(id) === undefined) return false;
      if (hasRealms.get(id) !== undefined) throw conflict(`tenant ${id} still has realms: delete them first`);
      deleteKeys.run(id);
      deleteOne.run(id);
      return true;
    });
  }

  create(tenant: TenantRecord): Promise<TenantRecord> {
    return settle(() => {
      try {
        this.insert.run(tenant.id, tenant.label, tenant.created);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`tenant with id ${tenant.id} already exists`);
        throw err;
      }
      return { ...tenant };
    });
  }

  get(id: string): Promise<TenantRecord | null> {
    return settle(() => {
      const row = this.selectOne.get(id);
      return row === undefined ? null : { ...row };
    });
  }

  list(): Promise<TenantRecord[]> {
    return settle(() => this.selectAll.all().map((row) => ({ ...row })));
  }

  delete(id: string): Promise<boolean> {
    return settle(() => this.deleteTx.immediate(id));
  }
}

export class SqliteSigningKeyStore implements SigningKeyStore {
  private readonly insert: Statement<[string, string, string | null, string, string]>;
  private readonly selectOne: Statement<[string], KeyRow>;
  private readonly selectByTenant: Statement<[string], KeyRow>;
  private readonly deleteOne: Statement<[string, string]>;

  constructor(db: Database) {
    const columns = 'id, tenant, realm, secret, created';
    this.insert = db.prepare(`INSERT INTO signing_keys (${columns}) VALUES (?, ?, ?, ?, ?)`);
    this.selectOne = db.prepare(`SELECT ${columns} FROM signing_keys WHERE id = ?`);
    this.selectByTenant = db.prepare(`SELECT ${columns} FROM signing_keys WHERE tenant = ? ORDER BY created, id`);
    this.deleteOne = db.prepare('DELETE FROM signing_keys WHERE tenant = ? AND id = ?');
  }

  create(key: SigningKeyRecord): Promise<void> {
    return settle(() => {
      try {
        this.insert.run(key.id, key.tenant, key.realm, key.secret, key.created);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`signing key ${key.id} already exists`);
        throw err;
      }
    });
  }

  get(id: string): Promise<SigningKeyRecord | null> {
    return settle(() => {
      const row = this.selectOne.get(id);
      return row === undefined ? null : { ...row };
    });
  }

  listByTenant(tenant: string): Promise<SigningKeyRecord[]> {
    return settle(() => this.selectByTenant.all(tenant).map((row) => ({ ...row })));
  }

  delete(tenant: string, id: string): Promise<boolean> {
    return settle(() => this.deleteOne.run(tenant, id).changes > 0);
  }
}
