/**
 * Who may serve an SQLite store. With the in-process event bus (LOCUS_BUS=local) one
 * server process owns it (`exclusive`): writes made through a second server on the same
 * file would never reach the first one's subscribers. With a bus between processes
 * (LOCUS_BUS=nats) several servers may share it (`shared`): each one's writes reach every
 * subscriber through the bus, and each store keeps its caches exact by `PRAGMA
 * data_version` (docs/architecture.md, "Several processes on one SQLite file").
 *
 * The claim is a lock on a small database beside the store, `<file>-owner`, held for the
 * life of the process: the operating system drops it when the process dies, so a crashed
 * owner never blocks a restart. An exclusive claim is an EXCLUSIVE lock, a shared one a
 * SHARED lock (an open read transaction): shared claims go together, an exclusive one
 * goes with no other claim. `<file>-owner.json` names the last claimant, for the message
 * the next one prints when it is refused.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { ConfigError } from '../../config/config.js';

/** `exclusive`: this process alone (the local bus); `shared`: with other servers that share it too (a bus between processes). */
export type StoreOwnershipMode = 'exclusive' | 'shared';

export interface StoreOwnerInfo {
  pid: number;
  host: string;
  startedAt: string;
  /** Absent in side files written before shared claims existed: exclusive. */
  ownership?: StoreOwnershipMode;
}

export interface StoreOwnership {
  /** Gives the store up (store close). Releasing twice is a no-op. */
  release(): void;
}

function readOwner(infoFile: string): Partial<StoreOwnerInfo> | null {
  try {
    return JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<StoreOwnerInfo>;
  } catch {
    // The owner won the lock but has not written its side file yet, or it was removed.
    return null;
  }
}

function describeOwner(info: Partial<StoreOwnerInfo> | null): string {
  if (info === null) return 'owner unknown';
  return `pid ${String(info.pid)} on host ${String(info.host)}, started ${String(info.startedAt)}`;
}

/** The message of a refused claim. */
function refusal(file: string, source: string, mode: StoreOwnershipMode, infoFile: string): string {
  const owner = readOwner(infoFile);
  if (mode === 'shared') {
    return (
      `${source}: the store ${file} is owned by a locus server with the local event bus (${describeOwner(owner)}), ` +
      'which cannot share it; stop that server, or run every server on this file with LOCUS_BUS=nats'
    );
  }
  const sharing = owner?.ownership === 'shared' ? ', sharing it over LOCUS_BUS=nats' : '';
  return (
    `${source}: the store ${file} is in use by another locus server (${describeOwner(owner)}${sharing}); ` +
    'stop that server, or give this one another LOCUS_STORE'
  );
}

/** Takes the lock of a claim on the lock database (throws SQLITE_BUSY when a claim in the way is held). */
function lock(db: Database.Database, mode: StoreOwnershipMode): void {
  // The journal in memory leaves no `-journal` file behind. The open transaction is never committed.
  db.pragma('journal_mode = MEMORY');
  if (mode === 'exclusive') {
    // Exclusive locking mode keeps the lock after each statement.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    return;
  }
  // A read inside an open transaction holds a SHARED lock until the transaction ends.
  db.exec('BEGIN');
  db.prepare('SELECT count(*) FROM sqlite_master').get();
}

function isBusy(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'SQLITE_BUSY';
}

/**
 * Claims the store at `file` (an absolute path) for this process, alone or shared (`mode`),
 * or throws a ConfigError naming the process whose claim is in the way. `source` names the
 * setting, for the message.
 */
export function claimStore(file: string, source: string, mode: StoreOwnershipMode = 'exclusive'): StoreOwnership {
  const lockFile = `${file}-owner`;
  const infoFile = `${lockFile}.json`;
  // Busy timeout 0: a claimant that is refused hears SQLITE_BUSY at once instead of waiting.
  const db = new Database(lockFile, { timeout: 0 });
  try {
    lock(db, mode);
  } catch (err) {
    db.close();
    if (!isBusy(err)) throw err;
    throw new ConfigError(refusal(file, source, mode, infoFile), { cause: err });
  }
  const info: StoreOwnerInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), ownership: mode };
  try {
    writeFileSync(infoFile, JSON.stringify(info) + '\n');
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    release(): void {
      if (!db.open) return;
      // Another sharing server may have named itself since: its side file stays.
      const named = readOwner(infoFile);
      if (named === null || (named.pid === info.pid && named.host === info.host && named.startedAt === info.startedAt)) rmSync(infoFile, { force: true });
      db.close();
    },
  };
}
