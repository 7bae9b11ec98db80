/**
 * Tenants and their JWT signing keys: the admin API (/admin/v1/tenant) and the admin CLI call
 * this. A key's secret is returned once, by create and rotate, and never again: lists and
 * reads show id, tenant, realm binding and creation time only. Secrets are never logged.
 */
import { defaultTenant } from '../auth/principal.js';
import { generateKeyId, generateKeySecret } from '../auth/signing-keys.js';
import { parseId } from '../domain/ids.js';
import { parseTenantId, parseTenantLabel } from '../domain/tenant.js';
import type { SigningKeyRecord, TenantRecord } from '../domain/types.js';
import { invalid, notFound } from '../errors.js';
import type { Store } from '../store/port.js';
import { isoTime, type Clock } from './clock.js';
import { noAnnouncer, type ControlAnnouncer } from './control.js';

/** A key as listed: everything but the secret. */
export interface KeyView {
  id: string;
  tenant: string;
  realm: string | null;
  created: string;
}

/** A key as created: its secret, shown this once. */
export interface IssuedKey extends KeyView {
  secret: string;
}

export interface TenantDetails extends TenantRecord {
  realms: string[];
  keys: KeyView[];
}

function bodyObject(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalid(`unknown key "${key.slice(0, 64)}"; allowed: ${allowed.join(', ')}`);
  }
  return body as Record<string, unknown>;
}

const keyView = (key: SigningKeyRecord): KeyView => ({ id: key.id, tenant: key.tenant, realm: key.realm, created: key.created });

export class TenantService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Where key changes are announced to every process's caches (auth/held-lookups.ts). */
    private readonly control: ControlAnnouncer = noAnnouncer,
  ) {}

  /** Creates a tenant (body `{label?}`); 409 `tenant with id <id> already exists`. */
  async create(tenantId: string, body: unknown): Promise<TenantRecord> {
    const id = parseTenantId(tenantId);
    const { label } = bodyObject(body, ['label']);
    return this.store.tenants.create({ id, label: parseTenantLabel(label), created: isoTime(this.clock()) });
  }

  list(): Promise<TenantRecord[]> {
    return this.store.tenants.list();
  }

  /** The tenant, its realms' names and its keys (without secrets); 404 when unknown. */
  async get(tenantId: string): Promise<TenantDetails> {
    const tenant = await this.require(tenantId);
    const realms = await this.store.realms.list(tenant.id);
    const keys = await this.store.signingKeys.listByTenant(tenant.id);
    return { ...tenant, realms: realms.map((r) => r.name), keys: keys.map(keyView) };
  }

  /** Deletes the tenant and its keys; 409 while it has realms (delete them first) and for the default tenant. */
  async delete(tenantId: string): Promise<void> {
    const id = parseTenantId(tenantId);
    if (!(await this.store.tenants.delete(id))) throw notFound(`unknown tenant ${id}`);
    this.control.announce({ kind: 'keys.changed', tenant: id });
  }

  /** A new signing key (body `{realm?}`: bind its tokens to one realm name); the secret is shown once. */
  async createKey(tenantId: string, body: unknown): Promise<IssuedKey> {
    const tenant = await this.require(tenantId);
    const { realm } = bodyObject(body, ['realm']);
    const binding = realm === undefined || realm === null ? null : parseId(realm, 'realm');
    return this.issue(tenant.id, binding);
  }

  async listKeys(tenantId: string): Promise<KeyView[]> {
    const tenant = await this.require(tenantId);
    return (await this.store.signingKeys.listByTenant(tenant.id)).map(keyView);
  }

  /** Revokes (deletes) a key: tokens it signed fail with `signing key not found` from then on. */
  async revokeKey(tenantId: string, keyId: string): Promise<void> {
    const tenant = parseTenantId(tenantId);
    const id = parseId(keyId, 'token');
    if (!(await this.store.signingKeys.delete(tenant, id))) throw notFound(`signing key ${id} not found in tenant ${tenant}`);
    this.control.announce({ kind: 'keys.changed', tenant });
  }

  /** A new key with the old one's realm binding, then the old one revoked. */
  async rotateKey(tenantId: string, keyId: string): Promise<IssuedKey & { replaced: string }> {
    const tenant = parseTenantId(tenantId);
    const id = parseId(keyId, 'token');
    const old = await this.store.signingKeys.get(id);
    if (old === null || old.tenant !== tenant) throw notFound(`signing key ${id} not found in tenant ${tenant}`);
    const issued = await this.issue(tenant, old.realm);
    await this.store.signingKeys.delete(tenant, id);
    this.control.announce({ kind: 'keys.changed', tenant });
    return { ...issued, replaced: id };
  }

  private async issue(tenant: string, realm: string | null): Promise<IssuedKey> {
    const record: SigningKeyRecord = { id: generateKeyId(), tenant, realm, secret: generateKeySecret(), created: isoTime(this.clock()) };
    await this.store.signingKeys.create(record);
    this.control.announce({ kind: 'keys.changed', tenant });
    return { id: record.id, tenant, realm, created: record.created, secret: record.secret };
  }

  private async require(tenantId: string): Promise<TenantRecord> {
    const id = parseTenantId(tenantId);
    const tenant = await this.store.tenants.get(id);
    if (tenant === null) {
      if (id === defaultTenant) throw new Error('the default tenant is missing from the store');
      throw notFound(`unknown tenant ${id}`);
    }
    return tenant;
  }
}
