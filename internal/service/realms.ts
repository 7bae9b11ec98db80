/**
 * Realm and token management: the admin API, the admin CLI, REST v2's realm endpoints and the
 * v1 realm actions call this. Realms are named within a tenant: every method takes the
 * tenant and the realm's name and works on the storage key (domain/realm-key.ts) inside.
 * Every create, label/data update and delete is published once on the tenant's channel
 * (RealmChangedEvent), whichever API made it.
 */
import { defaultTenant } from '../auth/principal.js';
import { generateSecret, generateTokenId, hashSecret } from '../auth/tokens.js';
import { parseId } from '../domain/ids.js';
import { parseRealmCreate, parseRealmPatch } from '../domain/realm-entity.js';
import { realmKey } from '../domain/realm-key.js';
import { defaultRealmSettings, parseRealmSettings } from '../domain/realm-settings.js';
import type { Realm, RealmSettings, Scope } from '../domain/types.js';
import type { ControlMessage, RealmChangedEvent } from '../domain/events.js';
import { invalid, notFound, realmExists, unknownRealm } from '../errors.js';
import type { Store } from '../store/port.js';
import type { ChangeListener } from './changes.js';
import { isoTime, type Clock } from './clock.js';
import { noAnnouncer, type ControlAnnouncer } from './control.js';
import { realmView, type RealmView } from './views.js';

export interface RealmDetails {
  /** The realm's name (the id its tenant knows). */
  id: string;
  tenant: string;
  settings: RealmSettings;
  created: string;
  tokens: { id: string; scope: Scope; created: string }[];
}

export interface IssuedToken {
  id: string;
  token: string;
  scope: Scope;
}

/** Where realm changes are published (events/port.ts EventBus.publishTenant). */
export interface RealmEvents {
  publishTenant(tenant: string, event: RealmChangedEvent): void;
}

const noRealmEvents: RealmEvents = { publishTenant: () => undefined };

/** The realm name the realm-events subscription uses (compat 5.2): refused on create. */
export const RESERVED_REALM = 'sys';

const scopes: readonly Scope[] = ['read', 'write', 'admin'];

/**
 * How long a realm is served from memory without a control message naming it: the bound for
 * changes no message reaches this process about (the admin CLI beside a server on the local bus).
 */
const settingsCacheMs = 1000;

function parseBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalid(`unknown key "${key.slice(0, 64)}"`);
  }
  return body as Record<string, unknown>;
}

/** 400 for the reserved name `sys` (a realm of that name could never be subscribed to). */
function refuseReserved(name: string): void {
  if (name === RESERVED_REALM) throw invalid(`realm id ${RESERVED_REALM} is reserved`, 'invalid_id');
}

export class RealmService {
  /** Realms by storage key (find): dropped by `realm.changed` (hear), held at most settingsCacheMs. */
  private readonly cache = new Map<string, { realm: Realm | null; expiresMs: number }>();
  /** Bumped by every drop: a find that began before it does not fill the cache. */
  private epoch = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly listener: ChangeListener,
    private readonly events: RealmEvents = noRealmEvents,
    /** Where realm, token and key changes are announced to every process's caches. */
    private readonly control: ControlAnnouncer = noAnnouncer,
  ) {}

  /** A control message: drops the realm it names from the cache. */
  hear(message: ControlMessage): void {
    if (message.kind === 'realm.changed') this.forget(message.realm);
  }

  /** Drops every realm held (the bus may have lost `realm.changed` messages). */
  dropAll(): void {
    this.epoch++;
    this.cache.clear();
  }

  /** Drops the realm here and tells every process. */
  private changed(key: string): void {
    this.forget(key);
    this.control.announce({ kind: 'realm.changed', realm: key });
  }

  private forget(key: string): void {
    this.epoch++;
    this.cache.delete(key);
  }

  /** Creates the realm or updates its settings (given keys replace, others keep): the admin API's PUT. */
  async put(tenant: string, name: string, body: unknown): Promise<{ realm: Realm; created: boolean }> {
    return this.write(tenant, name, body, 'create-or-update');
  }

  /** Creates a realm with the given settings (label null, data {}); an existing one is a conflict and stays as it is. */
  async createWithSettings(tenant: string, name: string, body: unknown): Promise<Realm> {
    return (await this.write(tenant, name, body, 'create')).realm;
  }

  /** Changes settings of an existing realm (given keys replace, others keep). */
  async updateSettings(tenant: string, name: string, body: unknown): Promise<Realm> {
    return (await this.write(tenant, name, body, 'update')).realm;
  }

  /**
   * Hivekit's realm create: label (required unless `labelRequired` is false: v1 `rea cre`),
   * data optional, default settings; an existing name is a conflict (`realm with id <id> already exists`).
   */
  async create(tenant: string, name: string, body: unknown, options: { labelRequired?: boolean } = {}): Promise<Realm> {
    const { id, label, data } = parseRealmCreate(name, body, options);
    refuseReserved(id);
    await this.requireTenant(tenant);
    const key = realmKey(tenant, id);
    const realm = await this.store.realms.create({ id: key, tenant, name: id, label, data, settings: defaultRealmSettings, created: isoTime(this.clock()) });
    this.changed(key);
    this.publish(realm, 'cre');
    return realm;
  }

  /** Hivekit's realm update: label and/or data, merged into the stored realm (applyRealmPatch); settings stay. */
  async update(tenant: string, name: string, body: unknown): Promise<Realm> {
    const { id, patch } = parseRealmPatch(name, body);
    const key = realmKey(tenant, id);
    const realm = await this.store.realms.update(key, patch);
    this.changed(key);
    if (realm === null) throw unknownRealm(id);
    this.publish(realm, 'upd');
    return realm;
  }

  /** The realm's id (name), label and data, read from the store (not the cache: a read follows writes of other processes). */
  async read(tenant: string, name: string): Promise<RealmView> {
    return realmView(await this.require(tenant, name));
  }

  async get(tenant: string, name: string): Promise<RealmDetails> {
    const realm = await this.require(tenant, name);
    const tokens = await this.store.tokens.listByRealm(realm.id);
    return {
      id: realm.name,
      tenant: realm.tenant,
      settings: realm.settings,
      created: realm.created,
      tokens: tokens.map((t) => ({ id: t.id, scope: t.scope, created: t.created })),
    };
  }

  /** The tenant's realms, by name; with no tenant, every realm of every tenant (retention, ops). */
  list(tenant?: string): Promise<Realm[]> {
    return this.store.realms.list(tenant);
  }

  async delete(tenant: string, name: string): Promise<void> {
    const id = parseId(name, 'realm');
    const key = realmKey(tenant, id);
    const deleted = await this.store.realms.delete(key);
    this.changed(key);
    if (!deleted) throw unknownRealm(id);
    // Its tokens and realm-bound signing keys went with it.
    this.control.announce({ kind: 'token.revoked', realm: key, hash: null });
    this.control.announce({ kind: 'keys.changed', tenant });
    this.listener.realmDeleted(key);
    this.events.publishTenant(tenant, { kind: 'rea', act: 'del', tenant, realm: key, name: id, record: null });
  }

  /** An opaque API token of the realm (any tenant's: its principal takes the realm's tenant). */
  async createToken(tenant: string, name: string, body: unknown): Promise<IssuedToken> {
    const realm = await this.require(tenant, name);
    const { scope } = parseBody(body, ['scope']);
    if (typeof scope !== 'string' || !(scopes as readonly string[]).includes(scope)) {
      throw invalid('scope must be one of read, write, admin');
    }
    const secret = generateSecret();
    const id = generateTokenId();
    await this.store.tokens.create({
      id,
      realm: realm.id,
      hash: hashSecret(secret),
      scope: scope as Scope,
      created: isoTime(this.clock()),
    });
    return { id, token: secret, scope: scope as Scope };
  }

  async revokeToken(tenant: string, name: string, tokenId: string): Promise<void> {
    const realm = await this.require(tenant, name);
    const id = parseId(tokenId, 'token');
    // The hash names the sign-in to drop in every process's cache (auth/held-lookups.ts).
    const hash = (await this.store.tokens.listByRealm(realm.id)).find((token) => token.id === id)?.hash ?? null;
    if (!(await this.store.tokens.delete(realm.id, id))) throw notFound(`token ${id} not found in realm ${realm.name}`);
    this.control.announce({ kind: 'token.revoked', realm: realm.id, hash });
  }

  /** The realm of a storage key, from a short-lived cache; null when it does not exist. */
  async find(key: string): Promise<Realm | null> {
    const now = this.clock();
    const hit = this.cache.get(key);
    if (hit !== undefined && hit.expiresMs > now) return hit.realm;
    const epoch = this.epoch;
    const realm = await this.store.realms.get(key);
    if (epoch === this.epoch) this.cache.set(key, { realm, expiresMs: now + settingsCacheMs });
    return realm;
  }

  /** Realm `name` of `tenant`, as find. */
  findIn(tenant: string, name: string): Promise<Realm | null> {
    return this.find(realmKey(tenant, name));
  }

  /** On a store with no realm: creates realm `demo` with a write token and returns it (shown once). */
  async ensureDemo(): Promise<IssuedToken | null> {
    if ((await this.store.realms.list()).length > 0) return null;
    await this.put(defaultTenant, 'demo', undefined);
    return this.createToken(defaultTenant, 'demo', { scope: 'write' });
  }

  private publish(realm: Realm, act: 'cre' | 'upd'): void {
    this.events.publishTenant(realm.tenant, {
      kind: 'rea',
      act,
      tenant: realm.tenant,
      realm: realm.id,
      name: realm.name,
      record: { label: realm.label, data: realm.data },
    });
  }

  private async requireTenant(tenant: string): Promise<void> {
    if (tenant !== defaultTenant && (await this.store.tenants.get(tenant)) === null) throw notFound(`unknown tenant ${tenant}`);
  }

  private async write(
    tenant: string,
    name: string,
    body: unknown,
    mode: 'create' | 'update' | 'create-or-update',
  ): Promise<{ realm: Realm; created: boolean }> {
    const id = parseId(name, 'realm');
    const key = realmKey(tenant, id);
    const { settings } = parseBody(body, ['settings']);
    const existing = await this.store.realms.get(key);
    if (mode === 'create' && existing !== null) throw realmExists(id);
    if (mode === 'update' && existing === null) throw unknownRealm(id);
    if (existing === null) {
      refuseReserved(id);
      await this.requireTenant(tenant);
    }
    const merged = parseRealmSettings(settings ?? {}, existing?.settings ?? defaultRealmSettings);
    // A create is the store's insert: of two creators racing (a CLI beside a server), one wins.
    const result =
      mode === 'create'
        ? {
            realm: await this.store.realms.create({ id: key, tenant, name: id, label: null, data: {}, settings: merged, created: isoTime(this.clock()) }),
            created: true,
          }
        : await this.store.realms.put(key, merged, isoTime(this.clock()));
    this.changed(key);
    if (result.created) this.publish(result.realm, 'cre');
    return result;
  }

  private async require(tenant: string, name: string): Promise<Realm> {
    const id = parseId(name, 'realm');
    const realm = await this.store.realms.get(realmKey(tenant, id));
    if (realm === null) throw unknownRealm(id);
    return realm;
  }
}
