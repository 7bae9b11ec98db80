/**
 * Opens the store named by LOCUS_STORE: an async registry keyed by the URL's scheme
 * (store-url.ts): `sqlite:` (embedded), `mongodb://` and `mongodb+srv://` (cluster mode).
 * The server and the admin CLI both open their store here.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, defaultStore } from '../config/config.js';
import type { Store } from './port.js';
import { storeSchemeOf, storeUrlProblem, type StoreScheme } from './store-url.js';

export interface OpenStoreOptions {
  /** Hears of failures in the store's background work (they are retried). */
  onBackgroundError?: (err: Error) => void;
  /**
   * SQLite: claims the store for this process until it is closed (store-owner.ts). The
   * server does; the admin CLI, short-lived and subscribed to nothing, does not, so it can
   * manage realms beside a running server. Other adapters ignore it.
   */
  claimOwnership?: boolean;
  /**
   * SQLite: how the claim is made when claimOwnership is set: `exclusive` (one process, the
   * local bus) or `shared` (several processes on one file, the NATS bus). Passed through to
   * the SQLite opener; other adapters ignore it.
   */
  ownership?: 'exclusive' | 'shared';
}

export type StoreOpener = (url: string, options: OpenStoreOptions) => Promise<Store>;

/** The absolute path of a `sqlite:` store's database file; null for the throwaway `sqlite::memory:` and for other schemes. */
export function storeFile(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
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
  readonly instructions: Store['instructions'];
  readonly leases: Store['leases'];

  constructor(
    private readonly store: Store,
    private readonly ownership: { release(): void },
  ) {
    this.realms = store.realms;
    this.tokens = store.tokens;
    this.tenants = store.tenants;
    this.signingKeys = store.signingKeys;
    this.objects = store.objects;
    this.areas = store.areas;
    this.instructions = store.instructions;
    this.leases = store.leases;
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

/** `sqlite:<path>`: the SQLite adapter, loaded only when used. */
const openSqlite: StoreOpener = async (url, options) => {
  const [{ openSqliteStore }, { claimStore }] = await Promise.all([import('./sqlite/sqlite-store.js'), import('./sqlite/store-owner.js')]);
  const sqliteOptions = {
    ...(options.onBackgroundError === undefined ? {} : { onIndexerError: options.onBackgroundError }),
    // Shared: several processes serve the file (store-owner.ts, sqlite-store.ts).
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
};

/** `mongodb://` and `mongodb+srv://`: the MongoDB adapter, loaded only when used. */
const openMongo: StoreOpener = async (url) => {
  const { openMongoStore } = await import('./mongodb/mongo-store.js');
  return openMongoStore(url);
};

const openers: Record<StoreScheme, StoreOpener> = {
  'sqlite:': openSqlite,
  'mongodb://': openMongo,
  'mongodb+srv://': openMongo,
};

/** Opens the store a URL names; ConfigError for a URL no adapter serves. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const problem = storeUrlProblem(url);
  const scheme = storeSchemeOf(url);
  if (problem !== null || scheme === null) throw new ConfigError(problem ?? `LOCUS_STORE: no store for "${url}"`);
  return openers[scheme](url, options);
}
