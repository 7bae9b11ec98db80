/**
 * One server process owns an SQLite store: its event bus is in-process (LOCUS_BUS=local),
 * so writes made through a second server on the same file would never reach the first
 * one's subscribers. The claim is an exclusive lock on a small database beside the store,
 * `<file>-owner`, held for the life of the process: the operating system drops it when
 * the process dies, so a crashed owner never blocks a restart. `<file>-owner.json` names
 * the owner, for the message the next claimant prints.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { ConfigError } from '../../config/config.js';

export interface StoreOwnerInfo {
  pid: number;
  host: string;
  startedAt: string;
}

export interface StoreOwnership {
  /** Gives the store up (store close). Releasing twice is a no-op. */
  release(): void;
}

function describeOwner(infoFile: string): string {
  try {
    const info = JSON.parse(readFileSync(infoFile, 'utf8')) as Partial<StoreOwnerInfo>;
    return `pid ${String(info.pid)} on host ${String(info.host)}, started ${String(info.startedAt)}`;
  } catch {
    // The owner won the lock but has not written its side file yet, or it was removed.
    return 'owner unknown';
  }
}

function isBusy(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'SQLITE_BUSY';
}

/**
 * Claims the store at `file` (an absolute path) for this process, or throws a ConfigError
 * naming the process that owns it. `source` names the setting, for the message.
 */
export function claimStore(file: string, source: string): StoreOwnership {
  const lockFile = `${file}-owner`;
  const infoFile = `${lockFile}.json`;
  // Busy timeout 0: a second claimant hears SQLITE_BUSY at once instead of waiting.
  const db = new Database(lockFile, { timeout: 0 });
  try {
    // Exclusive locking mode keeps the lock after each statement; the journal in memory
    // leaves no `-journal` file behind. The open transaction is never committed.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if (!isBusy(err)) throw err;
    throw new ConfigError(
      `${source}: the store ${file} is in use by another locus server (${describeOwner(infoFile)}); ` +
        'stop that server, or give this one another LOCUS_STORE',
      { cause: err },
    );
  }
  const info: StoreOwnerInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  try {
    writeFileSync(infoFile, JSON.stringify(info) + '\n');
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    release(): void {
      if (!db.open) return;
      rmSync(infoFile, { force: true });
      db.close();
    },
  };
}
