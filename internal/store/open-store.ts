/** Opens the store named by LOCUS_STORE. */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, defaultStore } from '../config/config.js';
import type { Store } from './port.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { claimStore, type StoreOwnership, type StoreOwnershipMode } from './sqlite/store-owner.js';

export interface OpenStoreOptions {
  /** Hears of failures in the store's background work (they are retried). */
  onBackgroundError?: (err: Error) => void;
  /**
   * Claims the store for this process until it is closed (store-owner.ts). The server
   * does; the admin CLI, short-lived and subscribed to nothing, does not, so it can
   * manage realms beside a running server.
   */
  claimOwnership?: boolean;
  /**
   * `shared`: other server processes serve the same SQLite file (only with a bus between
   * processes, LOCUS_BUS=nats); `exclusive` (default): this one alone (store-owner.ts).
   */
  ownership?: StoreOwnershipMode;
}

/** The absolute path of the store's database file; null for the throwaway `sqlite::memory:`. */
export function storeFile(url: string): string | null {
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? null : resolve(path);
}

/**
 * Only the default data directory is created: a directory named explicitly that is
 * missing is more likely a typo or an unmounted volume than a wish for a new store.
 */
function prepareDirectory(url: string, file: string): void {
  const dir = dirname(file);
  if (url === defaultStore) {
    mkdirSync(dir, { recursive: true });
    return;
  }
  const source = `LOCUS_STORE=${url}`;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ConfigError(`${source}: directory ${dir} does not exist`);
    if (code === 'ENOTDIR') isDirectory = false;
    else throw new ConfigError(`${source}: directory ${dir} cannot be read (${String(code)})`, { cause: err });
  }
  if (!isDirectory) throw new ConfigError(`${source}: ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`${source}: directory ${dir} is not writable`);
  }
}

/** The store, giving up its claim once it is closed. */
class OwnedStore implements Store {
  readonly realms: Store['realms'];
  readonly tokens: Store['tokens'];
  readonly tenants: Store['tenants'];
  readonly signingKeys: Store['signingKeys'];
  readonly objects: Store['objects'];
  readonly areas: Store['areas'];

  constructor(
    private readonly store: Store,
    private readonly ownership: StoreOwnership,
  ) {
    this.realms = store.realms;
    this.tokens = store.tokens;
    this.tenants = store.tenants;
    this.signingKeys = store.signingKeys;
    this.objects = store.objects;
    this.areas = store.areas;
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  async close(): Promise<void> {
    try {
      await this.store.close();
    } finally {
      this.ownership.release();
    }
  }
}

export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const sqliteOptions = {
    ...(options.onBackgroundError === undefined ? {} : { onIndexerError: options.onBackgroundError }),
    ...(options.ownership === undefined ? {} : { ownership: options.ownership }),
  };
  const file = storeFile(url);
  if (file === null) return openSqliteStore(':memory:', sqliteOptions);
  prepareDirectory(url, file);
  if (options.claimOwnership !== true) return openSqliteStore(file, sqliteOptions);
  const ownership = claimStore(file, `LOCUS_STORE=${url}`, options.ownership);
  try {
    return new OwnedStore(openSqliteStore(file, sqliteOptions), ownership);
  } catch (err) {
    ownership.release();
    throw err;
  }
}
