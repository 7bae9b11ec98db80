/**
 * Store leases in SQLite, in a file of their own beside the database (`<database>-leases`),
 * on a connection of their own.
 *
 * Not in the database: a lease is renewed every few seconds whether or not anything else is
 * written, and every commit to the database makes the other processes sharing it (store-owner.ts
 * `shared`) drop their held objects and spatial grids (`PRAGMA data_version`, object-store.ts).
 * Leases are coordination state only: a lost file loses nothing but who holds what, which the
 * holders' next renewals write again.
 *
 * An acquire is one conditional upsert in an IMMEDIATE transaction: of several processes asking
 * at once, one holds the lease and the others are told who holds it until when.
 */
import Database from 'better-sqlite3';
import type { Statement, Transaction } from 'better-sqlite3';
import type { Lease } from '../../domain/instruction.js';
import { leaseExpiry } from '../../domain/instruction-update.js';
import type { LeaseStore } from '../port.js';
import { BUSY_TIMEOUT_MS, enableWal } from './schema.js';
import { settle } from './sqlite-errors.js';

interface LeaseRow {
  name: string;
  holder: string;
  /** Epoch milliseconds. */
  expires: number;
}

/** The lease file's path for the database at `path`. */
export function leaseFilePath(path: string): string {
  return `${path}-leases`;
}

export class SqliteLeaseStore implements LeaseStore {
  private readonly db: Database.Database;
  private readonly acquireTx: Transaction<(name: string, holder: string, expires: number, now: number) => LeaseRow>;
  private readonly deleteHeld: Statement<[string, string]>;
  private readonly deleteAny: Statement<[string]>;

  /** Opens (creating when missing) the lease file at `path`. */
  constructor(path: string) {
    const db = new Database(path);
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      enableWal(db);
      db.pragma('synchronous = NORMAL');
      db.transaction(() => db.exec('CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY NOT NULL, holder TEXT NOT NULL, expires INTEGER NOT NULL)')).immediate();
      // Taken when free, renewed by its holder, taken over once expired.
      const take = db.prepare<[string, string, number, number]>(
        `INSERT INTO leases (name, holder, expires) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
         WHERE leases.holder = excluded.holder OR leases.expires <= ?`,
      );
      const selectOne = db.prepare<[string], LeaseRow>('SELECT name, holder, expires FROM leases WHERE name = ?');
      this.acquireTx = db.transaction((name: string, holder: string, expires: number, now: number) => {
        take.run(name, holder, expires, now);
        return selectOne.get(name) as LeaseRow;
      });
      this.deleteHeld = db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?');
      this.deleteAny = db.prepare('DELETE FROM leases WHERE name = ?');
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
  }

  acquire(name: string, holder: string, ttlMs: number, now: string): Promise<Lease> {
    return settle(() => {
      const expires = leaseExpiry(now, ttlMs);
      const row = this.acquireTx.immediate(name, holder, expires, expires - ttlMs);
      return { name: row.name, holder: row.holder, expires: new Date(row.expires).toISOString() };
    });
  }

  release(name: string, holder: string): Promise<void> {
    return settle(() => {
      this.deleteHeld.run(name, holder);
    });
  }

  /** Removes the lease whoever holds it (its realm was deleted). */
  remove(name: string): void {
    this.deleteAny.run(name);
  }

  /** Closing twice is a no-op. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}
