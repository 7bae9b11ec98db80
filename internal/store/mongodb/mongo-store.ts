/**
 * The MongoDB adapter of the store port (cluster mode), on the official driver.
 *
 * A control database (the URL's path, default `locus`) holds tenants, signing keys, tokens
 * and the realm registry (and store leases); each realm has a database of its own (names.ts) with `objects`,
 * `areas`, `history` and its instructions (instruction-store.ts; indexes.ts). Indexes are made at start (control and every
 * registered realm) and when a realm is provisioned (put, create, first write).
 *
 * Connection: a pool (maxPoolSize, default 50), server selection and connect timeouts
 * (default 5 s, so that an unreachable server fails requests and `ping` — `/readyz` — in
 * bounded time), retryable reads and writes. Options given in the URL win over these defaults.
 */
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { ConfigError } from '../../config/config.js';
import { LocusError } from '../../errors.js';
import type { Store } from '../port.js';
import { redactStoreUrl } from '../store-url.js';
import { MongoAreaStore } from './area-store.js';
import { controlCollections, MongoRealmStore, MongoSigningKeyStore, MongoTenantStore, MongoTokenStore } from './control-stores.js';
import { ensureControlIndexes } from './indexes.js';
import { MongoInstructionStore, MongoLeaseStore } from './instruction-store.js';
import { translateMongoError } from './mongo-errors.js';
import { controlDatabaseName } from './names.js';
import { MongoObjectStore } from './object-store.js';
import { RealmDatabases } from './realm-databases.js';

export interface MongoStoreOptions {
  /** The clock for records the store makes itself (the default tenant's creation time). */
  now?: () => string;
}

/** Connection defaults, each used only when the URL does not set it. */
export const CONNECTION_DEFAULTS = {
  maxPoolSize: 50,
  serverSelectionTimeoutMS: 5_000,
  connectTimeoutMS: 5_000,
  socketTimeoutMS: 60_000,
  retryWrites: true,
  retryReads: true,
  appName: 'locus',
} as const;

/** The client options for a URL: the defaults it does not set itself (pure). */
export function clientOptions(url: string): MongoClientOptions {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const given = new Set([...new URLSearchParams(query).keys()].map((key) => key.toLowerCase()));
  const options: MongoClientOptions = { ignoreUndefined: true };
  for (const [key, value] of Object.entries(CONNECTION_DEFAULTS)) {
    if (!given.has(key.toLowerCase())) (options as Record<string, unknown>)[key] = value;
  }
  return options;
}

/** The URL with any password replaced, for messages. */
export const redactUrl = redactStoreUrl;

export class MongoStore implements Store {
  readonly realms: MongoRealmStore;
  readonly tokens: MongoTokenStore;
  readonly tenants: MongoTenantStore;
  readonly signingKeys: MongoSigningKeyStore;
  readonly objects: MongoObjectStore;
  readonly areas: MongoAreaStore;
  readonly instructions: MongoInstructionStore;
  readonly leases: MongoLeaseStore;
  private closed = false;

  constructor(
    private readonly client: MongoClient,
    readonly controlName: string,
  ) {
    const control = client.db(controlName);
    const c = controlCollections(control);
    const databases = new RealmDatabases(client, controlName, async (realm) => (await c.realms.findOne({ _id: realm }, { projection: { _id: 1 } })) !== null);
    this.objects = new MongoObjectStore(databases);
    this.areas = new MongoAreaStore(databases);
    this.realms = new MongoRealmStore(c, databases, this.objects);
    this.tokens = new MongoTokenStore(c);
    this.tenants = new MongoTenantStore(c);
    this.signingKeys = new MongoSigningKeyStore(c);
    this.instructions = new MongoInstructionStore(databases, c.instructionRealms);
    this.leases = new MongoLeaseStore(c.leases);
    this.databases = databases;
  }

  private readonly databases: RealmDatabases;

  /** Indexes of the control database and of every registered realm; the default tenant. */
  async prepare(now: string): Promise<void> {
    await ensureControlIndexes(this.client.db(this.controlName));
    await this.tenants.ensureDefault(now);
    for (const [realm, days] of await this.realms.retentions()) await this.databases.provision(realm, days);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new LocusError('unavailable', 'store is closed');
    try {
      await this.client.db(this.controlName).command({ ping: 1 });
    } catch (err) {
      throw translateMongoError(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.objects.settle();
    await this.client.close();
  }
}

/**
 * Connects to the MongoDB server of a `mongodb://` or `mongodb+srv://` URL and prepares
 * the store. An unreachable server is `unavailable` (after serverSelectionTimeoutMS), with
 * the URL (password hidden) in the message.
 */
export async function openMongoStore(url: string, options: MongoStoreOptions = {}): Promise<MongoStore> {
  const control = controlDatabaseName(url);
  let client: MongoClient;
  try {
    client = new MongoClient(url, clientOptions(url));
  } catch (err) {
    throw new ConfigError(`LOCUS_STORE=${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await client.connect();
    const store = new MongoStore(client, control);
    await store.prepare((options.now ?? (() => new Date().toISOString()))());
    return store;
  } catch (err) {
    await client.close().catch(() => undefined);
    const translated = translateMongoError(err);
    if (translated.code === 'unavailable' || translated.code === 'internal') {
      const reason = err instanceof Error ? err.message : String(err);
      throw new LocusError('unavailable', `the store at ${redactUrl(url)} cannot be reached or prepared: ${reason}`, { cause: err });
    }
    throw translated;
  }
}
