/** Realm and token management: the admin API, the admin CLI and REST v2's realm endpoints call this. */
import { generateSecret, generateTokenId, hashSecret } from '../auth/tokens.js';
import { parseId } from '../domain/ids.js';
import { parseRealmCreate, parseRealmPatch } from '../domain/realm-entity.js';
import { defaultRealmSettings, parseRealmSettings } from '../domain/realm-settings.js';
import type { Realm, RealmSettings, Scope } from '../domain/types.js';
import { invalid, notFound, realmExists, unknownRealm } from '../errors.js';
import type { Store } from '../store/port.js';
import type { ChangeListener } from './changes.js';
import { isoTime, type Clock } from './clock.js';
import { realmView, type RealmView } from './views.js';

export interface RealmDetails {
  id: string;
  settings: RealmSettings;
  created: string;
  tokens: { id: string; scope: Scope; created: string }[];
}

export interface IssuedToken {
  id: string;
  token: string;
  scope: Scope;
}

const scopes: readonly Scope[] = ['read', 'write', 'admin'];

/** How long a realm's settings are served from memory; the CLI may change them from another process. */
const settingsCacheMs = 1000;

function parseBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalid(`unknown key "${key.slice(0, 64)}"`);
  }
  return body as Record<string, unknown>;
}

export class RealmService {
  private readonly cache = new Map<string, { realm: Realm | null; expiresMs: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly listener: ChangeListener,
  ) {}

  /** Creates the realm or updates its settings (given keys replace, others keep): the admin API's PUT. */
  put(realmId: string, body: unknown): Promise<{ realm: Realm; created: boolean }> {
    return this.write(realmId, body, 'create-or-update');
  }

  /** Creates a realm with the given settings (label null, data {}); an existing one is a conflict and stays as it is. */
  async createWithSettings(realmId: string, body: unknown): Promise<Realm> {
    return (await this.write(realmId, body, 'create')).realm;
  }

  /** Changes settings of an existing realm (given keys replace, others keep). */
  async updateSettings(realmId: string, body: unknown): Promise<Realm> {
    return (await this.write(realmId, body, 'update')).realm;
  }

  /** Hivekit's realm create: label required, data optional, default settings; an existing id is a conflict. */
  async create(realmId: string, body: unknown): Promise<Realm> {
    const { id, label, data } = parseRealmCreate(realmId, body);
    const realm = await this.store.realms.create({ id, label, data, settings: defaultRealmSettings, created: isoTime(this.clock()) });
    this.cache.delete(id);
    return realm;
  }

  /** Hivekit's realm update: label and/or data, merged into the stored realm (applyRealmPatch); settings stay. */
  async update(realmId: string, body: unknown): Promise<Realm> {
    const { id, patch } = parseRealmPatch(realmId, body);
    const realm = await this.store.realms.update(id, patch);
    this.cache.delete(id);
    if (realm === null) throw unknownRealm(id);
    return realm;
  }

  /** The realm's id, label and data, read from the store (not the cache: a read follows writes of other processes). */
  async read(realmId: string): Promise<RealmView> {
    return realmView(await this.require(realmId));
  }

  async get(realmId: string): Promise<RealmDetails> {
    const realm = await this.require(realmId);
    const tokens = await this.store.tokens.listByRealm(realm.id);
    return {
      id: realm.id,
      settings: realm.settings,
      created: realm.created,
      tokens: tokens.map((t) => ({ id: t.id, scope: t.scope, created: t.created })),
    };
  }

  list(): Promise<Realm[]> {
    return this.store.realms.list();
  }

  async delete(realmId: string): Promise<void> {
    const id = parseId(realmId, 'realm');
    const deleted = await this.store.realms.delete(id);
    this.cache.delete(id);
    if (!deleted) throw unknownRealm(id);
    this.listener.realmDeleted(id);
  }

  async createToken(realmId: string, body: unknown): Promise<IssuedToken> {
    const realm = await this.require(realmId);
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

  async revokeToken(realmId: string, tokenId: string): Promise<void> {
    const realm = await this.require(realmId);
    const id = parseId(tokenId, 'token');
    if (!(await this.store.tokens.delete(realm.id, id))) throw notFound(`token ${id} not found in realm ${realm.id}`);
  }

  /** The realm, from a short-lived cache; null when it does not exist. */
  async find(realmId: string): Promise<Realm | null> {
    const now = this.clock();
    const hit = this.cache.get(realmId);
    if (hit !== undefined && hit.expiresMs > now) return hit.realm;
    const realm = await this.store.realms.get(realmId);
    this.cache.set(realmId, { realm, expiresMs: now + settingsCacheMs });
    return realm;
  }

  /** On a store with no realm: creates realm `demo` with a write token and returns it (shown once). */
  async ensureDemo(): Promise<IssuedToken | null> {
    if ((await this.store.realms.list()).length > 0) return null;
    await this.put('demo', undefined);
    return this.createToken('demo', { scope: 'write' });
  }

  private async write(
    realmId: string,
    body: unknown,
    mode: 'create' | 'update' | 'create-or-update',
  ): Promise<{ realm: Realm; created: boolean }> {
    const id = parseId(realmId, 'realm');
    const { settings } = parseBody(body, ['settings']);
    const existing = await this.store.realms.get(id);
    if (mode === 'create' && existing !== null) throw realmExists(id);
    if (mode === 'update' && existing === null) throw unknownRealm(id);
    const merged = parseRealmSettings(settings ?? {}, existing?.settings ?? defaultRealmSettings);
    // A create is the store's insert: of two creators racing (a CLI beside a server), one wins.
    const result =
      mode === 'create'
        ? { realm: await this.store.realms.create({ id, label: null, data: {}, settings: merged, created: isoTime(this.clock()) }), created: true }
        : await this.store.realms.put(id, merged, isoTime(this.clock()));
    this.cache.delete(id);
    return result;
  }

  private async require(realmId: string): Promise<Realm> {
    const id = parseId(realmId, 'realm');
    const realm = await this.store.realms.get(id);
    if (realm === null) throw unknownRealm(id);
    return realm;
  }
}
