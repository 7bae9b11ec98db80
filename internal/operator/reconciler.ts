/**
 * One Realm's reconcile, level-based and idempotent: whatever state the store and the API
 * server are in (a fresh Realm, an operator killed half-way, a Secret deleted by hand), one
 * run moves them to what the Realm declares (desired-state.ts), and a second run changes
 * nothing. Order matters for crash safety: the finalizer before anything is provisioned;
 * a minted secret is written to its Kubernetes Secret before the store learns of it (a crash
 * in between leaves a Secret whose credential the next run finds missing and mints again,
 * never a credential in the store that nobody holds).
 *
 * The tenant part (the namespace's signing key Secret) is shared by the namespace's Realms:
 * it runs under a per-namespace lock.
 */
import type { Logger } from 'pino';
import { generateKeyId, generateKeySecret } from '../auth/signing-keys.js';
import { generateSecret, generateTokenId, hashSecret } from '../auth/tokens.js';
import { defaultTenant } from '../auth/principal.js';
import { realmKey } from '../domain/realm-key.js';
import type { SigningKeyRecord } from '../domain/types.js';
import { LocusError } from '../errors.js';
import { isoTime, type Clock } from '../service/clock.js';
import type { ControlAnnouncer } from '../service/control.js';
import type { RealmService } from '../service/realms.js';
import type { TenantService } from '../service/tenants.js';
import type { Store } from '../store/port.js';
import type { RealmResource } from '../kube/realm-resource.js';
import {
  CREDENTIAL_KEYS,
  credentialsLedger,
  credentialsSecretLabels,
  credentialsSecretName,
  deletionPolicyOf,
  desiredRealm,
  dueRetiredKeys,
  dueSuperseded,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  nextStep,
  realmIdOwner,
  RETIRED_KEYS_ANNOTATION,
  replacedIds,
  RETIRED_PREFIX,
  retiredKeys,
  retiredKeysAnnotation,
  ROTATIONS_APPLIED_ANNOTATION,
  rotationRequest,
  sameSettings,
  sameStatus,
  statusFor,
  supersede,
  TENANT_KEY_KEYS,
  TENANT_KEY_SECRET,
  withAppliedRotation,
  withFinalizer,
  type IssuedCredentials,
  type Outcome,
} from './desired-state.js';
import type { RealmCredentialsStatus } from '../kube/realm-resource.js';
import type { KubePort, SecretObject } from './kube-port.js';
import type { ProcessResult } from './work-queue.js';

export interface ReconcilerDeps {
  kube: KubePort;
  store: Store;
  realms: RealmService;
  tenants: TenantService;
  control: ControlAnnouncer;
  clock: Clock;
  /** How long a rotated-out tenant key keeps being accepted. */
  keyGraceMs: number;
  /** How long a superseded token or realm-bound key (its Secret minted again) keeps being accepted. */
  credentialsGraceMs: number;
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
  /** The Realms of a namespace as the watch sees them (for realm ids declared twice); default none. */
  realmsOf?: (namespace: string) => RealmResource[];
}

/** A failure with a reason of its own for the status conditions (default `ReconcileFailed`). */
export class ReconcileError extends Error {
  override readonly name = 'ReconcileError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Scope of the opaque token a credentials Secret holds: devices write. */
const TOKEN_SCOPE = 'write';

export class Reconciler {
  private readonly tenantLocks = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: ReconcilerDeps) {}

  /** Reconciles the Realm `namespace/name` (the work queue's key). */
  async reconcileKey(key: string): Promise<ProcessResult> {
    const slash = key.indexOf('/');
    return this.reconcile(key.slice(0, slash), key.slice(slash + 1));
  }

  async reconcile(namespace: string, name: string): Promise<ProcessResult> {
    const { kube } = this.deps;
    let realm = await kube.getRealm(namespace, name);
    switch (nextStep(realm)) {
      case 'nothing':
        return {};
      case 'finalize':
        await this.finalize(realm as RealmResource);
        return {};
      case 'add-finalizer':
        realm = await kube.setFinalizers(realm as RealmResource, withFinalizer((realm as RealmResource).metadata.finalizers, true));
        break;
      case 'reconcile':
        break;
    }
    const current = realm as RealmResource;
    try {
      return await this.provision(current);
    } catch (err) {
      await this.reportFailure(current, err);
      throw err;
    }
  }

  private async provision(realm: RealmResource): Promise<ProcessResult> {
    const desired = desiredRealm(realm);
    const { tenant, realmId } = desired;
    const owner = realmIdOwner(realm, this.deps.realmsOf?.(tenant) ?? []);
    if (owner !== null) {
      throw new ReconcileError('RealmIdConflict', `realm id ${realmId} is already declared by Realm ${owner.metadata.name} of this namespace; give this Realm another spec.realmId`);
    }
    await this.ensureTenant(tenant);
    const tenantKey = await this.withTenantLock(tenant, () => this.ensureTenantKey(realm, tenant));

    // The realm and its settings (MongoDB: its database and indexes, made by the store's put).
    const key = realmKey(tenant, realmId);
    const existing = await this.deps.store.realms.get(key);
    // filterIndexes always named: absent from the spec, [] removes the realm's (a put keeps what it does not name).
    const settingsBody = { settings: { ...desired.settings, filterIndexes: desired.settings.filterIndexes ?? [] } };
    if (existing === null) {
      await this.deps.realms.put(tenant, realmId, settingsBody);
      await this.event(realm, 'Normal', 'Created', `realm ${realmId} provisioned in tenant ${tenant}`);
    } else if (!sameSettings(existing.settings, desired.settings)) {
      await this.deps.realms.put(tenant, realmId, settingsBody);
      await this.event(realm, 'Normal', 'Updated', `realm ${realmId}: settings changed`);
    }
    if (desired.label !== undefined && desired.label !== (existing?.label ?? null)) {
      await this.deps.realms.update(tenant, realmId, { label: desired.label });
    }

    const creds = await this.ensureCredentials(realm, tenant, realmId);
    await this.writeStatus(realm, { kind: 'ready', realmId, credentialsSecret: creds.name, credentials: creds.credentials });
    const comeBack = [tenantKey.requeueAfterMs, creds.requeueAfterMs].filter((ms): ms is number => ms !== null);
    return comeBack.length === 0 ? {} : { requeueAfterMs: Math.min(...comeBack) };
  }

  /** The tenant record of the namespace (the default tenant always exists). */
  private async ensureTenant(tenant: string): Promise<void> {
    if (tenant === defaultTenant || (await this.deps.store.tenants.get(tenant)) !== null) return;
    try {
      await this.deps.tenants.create(tenant, { label: `Kubernetes namespace ${tenant}` });
    } catch (err) {
      // Created meanwhile (another Realm of the namespace): fine.
      if (!(err instanceof LocusError && err.code === 'conflict')) throw err;
    }
  }

  private async withTenantLock<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    const before = this.tenantLocks.get(tenant) ?? Promise.resolve();
    const run = before.then(work, work);
    const settled = run.catch(() => undefined);
    this.tenantLocks.set(tenant, settled);
    try {
      return await run;
    } finally {
      if (this.tenantLocks.get(tenant) === settled) this.tenantLocks.delete(tenant);
    }
  }

  /** Stores `record` unless a key of that id is there; an id taken by another key is an error. */
  private async storeKey(record: SigningKeyRecord): Promise<void> {
    const found = await this.deps.store.signingKeys.get(record.id);
    if (found !== null) {
      if (found.tenant !== record.tenant || found.realm !== record.realm || found.secret !== record.secret) {
        throw new Error(`signing key ${record.id} in the store is not the one in the Secret`);
      }
      return;
    }
    await this.deps.store.signingKeys.create(record);
    this.deps.control.announce({ kind: 'keys.changed', tenant: record.tenant });
  }

  /**
   * The namespace's signing key Secret: created when absent; its key put in the store when
   * missing there; rotated when asked (the old key retired for the grace period); retired
   * keys past their grace removed. Returns when to come back for the next expiry.
   */
  private async ensureTenantKey(realm: RealmResource, tenant: string): Promise<{ requeueAfterMs: number | null }> {
    const { kube, clock } = this.deps;
    const now = clock();
    const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
    let secret = await kube.getSecret(tenant, TENANT_KEY_SECRET);
    if (secret === null) {
      const kid = generateKeyId();
      const data = { [TENANT_KEY_KEYS.tenant]: tenant, [TENANT_KEY_KEYS.keyId]: kid, [TENANT_KEY_KEYS.signingKey]: generateKeySecret() };
      await kube.createSecret({ name: TENANT_KEY_SECRET, namespace: tenant, labels, annotations: {}, data });
      await this.storeKey({ id: kid, tenant, realm: null, secret: data[TENANT_KEY_KEYS.signingKey] ?? '', created: isoTime(now) });
      await this.event(realm, 'Normal', 'TenantKeyCreated', `signing key ${kid} of tenant ${tenant} created in Secret ${TENANT_KEY_SECRET}`);
      return { requeueAfterMs: null };
    }
    const currentKid = secret.data[TENANT_KEY_KEYS.keyId];
    const currentSecret = secret.data[TENANT_KEY_KEYS.signingKey];
    if (currentKid === undefined || currentSecret === undefined || currentKid === '' || currentSecret === '') {
      throw new Error(`Secret ${tenant}/${TENANT_KEY_SECRET} lacks ${TENANT_KEY_KEYS.keyId} or ${TENANT_KEY_KEYS.signingKey}: delete it to have a new key made`);
    }
    await this.storeKey({ id: currentKid, tenant, realm: null, secret: currentSecret, created: isoTime(now) });

    const retired = retiredKeys(secret.annotations);
    const rotation = rotationRequest(realm.metadata.annotations, secret.annotations);
    if (rotation !== null) {
      const kid = generateKeyId();
      const signingKey = generateKeySecret();
      retired.set(currentKid, now + this.deps.keyGraceMs);
      const data = { ...secret.data, [`${RETIRED_PREFIX}${currentKid}`]: currentSecret, [TENANT_KEY_KEYS.keyId]: kid, [TENANT_KEY_KEYS.signingKey]: signingKey };
      const annotations = {
        ...secret.annotations,
        [ROTATIONS_APPLIED_ANNOTATION]: withAppliedRotation(secret.annotations, rotation),
        [RETIRED_KEYS_ANNOTATION]: retiredKeysAnnotation(retired),
      };
      await kube.replaceSecret({ name: TENANT_KEY_SECRET, namespace: tenant, labels: { ...secret.labels, ...labels }, annotations, data, resourceVersion: secret.resourceVersion });
      await this.storeKey({ id: kid, tenant, realm: null, secret: signingKey, created: isoTime(now) });
      await this.event(realm, 'Normal', 'TenantKeyRotated', `signing key of tenant ${tenant} rotated: ${kid} signs now, ${currentKid} is accepted for ${Math.round(this.deps.keyGraceMs / 1000)} s more`);
      secret = await kube.getSecret(tenant, TENANT_KEY_SECRET);
      if (secret === null) return { requeueAfterMs: this.deps.keyGraceMs };
    }

    const { due, nextInMs } = dueRetiredKeys(retired, now);
    if (due.length > 0) {
      for (const kid of due) {
        if (await this.deps.store.signingKeys.delete(tenant, kid)) this.deps.control.announce({ kind: 'keys.changed', tenant });
        retired.delete(kid);
      }
      const data = { ...secret.data };
      for (const kid of due) delete data[`${RETIRED_PREFIX}${kid}`];
      const annotations = { ...secret.annotations, [RETIRED_KEYS_ANNOTATION]: retiredKeysAnnotation(retired) };
      await kube.replaceSecret({ name: TENANT_KEY_SECRET, namespace: tenant, labels: secret.labels, annotations, data, resourceVersion: secret.resourceVersion });
      await this.event(realm, 'Normal', 'TenantKeyRetired', `signing key${due.length > 1 ? 's' : ''} ${due.join(', ')} of tenant ${tenant} removed after the grace period`);
    }
    return { requeueAfterMs: nextInMs === null ? null : nextInMs + 50 };
  }

  /** Does the store still honour the token and the key a credentials Secret holds? */
  private async credentialsValid(secret: SecretObject, tenant: string, realmId: string): Promise<{ token: boolean; key: boolean }> {
    const data = secret.data;
    const token = data[CREDENTIAL_KEYS.token];
    const tokenRecord = token === undefined ? null : await this.deps.store.tokens.findByHash(hashSecret(token));
    const kid = data[CREDENTIAL_KEYS.keyId];
    const keyRecord = kid === undefined ? null : await this.deps.store.signingKeys.get(kid);
    return {
      token: tokenRecord !== null && tokenRecord.realm === realmKey(tenant, realmId) && tokenRecord.id === data[CREDENTIAL_KEYS.tokenId],
      key: keyRecord !== null && keyRecord.tenant === tenant && keyRecord.realm === realmId && keyRecord.secret === data[CREDENTIAL_KEYS.signingKey],
    };
  }

  /**
   * The credentials Secret: an opaque token and a realm-bound signing key, minted only when
   * missing or revoked. What a new mint replaces (the Secret's previous ids, and those the
   * status recorded, e.g. of a deleted Secret) is superseded: still accepted for the grace
   * period, then revoked. Returns the ids to record and when to come back for the next revocation.
   */
  private async ensureCredentials(
    realm: RealmResource,
    tenant: string,
    realmId: string,
  ): Promise<{ name: string; credentials: RealmCredentialsStatus; requeueAfterMs: number | null }> {
    const { kube, store, clock } = this.deps;
    const name = credentialsSecretName(realm.metadata.name);
    const existing = await kube.getSecret(tenant, name);
    const valid = existing === null ? { token: false, key: false } : await this.credentialsValid(existing, tenant, realmId);
    const ownedByThis = existing !== null && realm.metadata.uid !== undefined && existing.ownerUids.includes(realm.metadata.uid);
    const ledger = credentialsLedger(realm.status);
    const previous = existing === null ? null : { tokenId: existing.data[CREDENTIAL_KEYS.tokenId], keyId: existing.data[CREDENTIAL_KEYS.keyId] };
    const upToDate = existing !== null && valid.token && valid.key && ownedByThis && existing.data[CREDENTIAL_KEYS.realm] === realmId;

    const data: Record<string, string> = { ...(existing?.data ?? {}), [CREDENTIAL_KEYS.tenant]: tenant, [CREDENTIAL_KEYS.realm]: realmId };
    const minted: string[] = [];
    if (!upToDate && !valid.token) {
      data[CREDENTIAL_KEYS.tokenId] = generateTokenId();
      data[CREDENTIAL_KEYS.token] = generateSecret();
      minted.push('token');
    }
    if (!upToDate && !valid.key) {
      data[CREDENTIAL_KEYS.keyId] = generateKeyId();
      data[CREDENTIAL_KEYS.signingKey] = generateKeySecret();
      minted.push('signing key');
    }
    const current: IssuedCredentials = { tokenId: data[CREDENTIAL_KEYS.tokenId] ?? '', keyId: data[CREDENTIAL_KEYS.keyId] ?? '' };
    const replaced = await this.liveIds(replacedIds(ledger, previous, current), tenant, realmId);
    const now = clock();
    const { credentials, revokeNow } = supersede(ledger, current, replaced, now + this.deps.credentialsGraceMs);

    if (!upToDate) {
      // The status first: once the Secret is overwritten, it is the only record of the ids it held.
      if (replaced.length > 0) await kube.patchStatus(realm, { credentials });
      const write = {
        name,
        namespace: tenant,
        labels: credentialsSecretLabels(realm.metadata.name),
        annotations: {},
        data,
        owner: realm,
      };
      // The Secret first, then the store (see the file comment).
      if (existing === null) await kube.createSecret(write);
      else await kube.replaceSecret({ ...write, resourceVersion: existing.resourceVersion });
      const created = isoTime(now);
      if (!valid.token) {
        await store.tokens.create({ id: current.tokenId, realm: realmKey(tenant, realmId), hash: hashSecret(data[CREDENTIAL_KEYS.token] ?? ''), scope: TOKEN_SCOPE, created });
      }
      if (!valid.key) {
        await this.storeKey({ id: current.keyId, tenant, realm: realmId, secret: data[CREDENTIAL_KEYS.signingKey] ?? '', created });
      }
      if (minted.length > 0) {
        const until = replaced.length > 0 ? `; the previous ${replaced.join(', ')} accepted until ${new Date(now + this.deps.credentialsGraceMs).toISOString()}` : '';
        await this.event(realm, 'Normal', existing === null ? 'CredentialsCreated' : 'CredentialsRenewed', `Secret ${name}: ${minted.join(' and ')} ${existing === null ? 'created' : 'minted again (missing or revoked)'}${until}`);
      }
    }

    const { due, nextInMs } = dueSuperseded(credentials.superseded, now);
    const revoke = [...revokeNow, ...due];
    if (revoke.length > 0) {
      await this.revokeIds(revoke, tenant, realmId);
      credentials.superseded = credentials.superseded.filter((s) => !due.includes(s.id));
      await this.event(realm, 'Normal', 'CredentialsRevoked', `superseded credential${revoke.length > 1 ? 's' : ''} ${revoke.join(', ')} revoked after the grace period`);
    }
    return { name, credentials, requeueAfterMs: nextInMs === null ? null : nextInMs + 50 };
  }

  /** Of `ids` (tokens `tok_…`, keys `key_…`), those the store still honours for this realm. */
  private async liveIds(ids: string[], tenant: string, realmId: string): Promise<string[]> {
    if (ids.length === 0) return [];
    const tokens = new Set((await this.deps.store.tokens.listByRealm(realmKey(tenant, realmId))).map((t) => t.id));
    const live: string[] = [];
    for (const id of ids) {
      if (tokens.has(id)) {
        live.push(id);
        continue;
      }
      const key = await this.deps.store.signingKeys.get(id);
      if (key !== null && key.tenant === tenant && key.realm === realmId) live.push(id);
    }
    return live;
  }

  /** Revokes tokens and realm-bound keys of this realm by id; every API process refuses them at once. */
  private async revokeIds(ids: string[], tenant: string, realmId: string): Promise<void> {
    const { store, control } = this.deps;
    const key = realmKey(tenant, realmId);
    const tokens = await store.tokens.listByRealm(key);
    let keysDropped = false;
    for (const id of ids) {
      const token = tokens.find((t) => t.id === id);
      if (token !== undefined) {
        if (await store.tokens.delete(key, id)) control.announce({ kind: 'token.revoked', realm: key, hash: token.hash });
        continue;
      }
      const signingKey = await store.signingKeys.get(id);
      if (signingKey !== null && signingKey.tenant === tenant && signingKey.realm === realmId && (await store.signingKeys.delete(tenant, id))) keysDropped = true;
    }
    if (keysDropped) control.announce({ kind: 'keys.changed', tenant });
  }

  /** Deletion: revoke the realm's credentials, keep or drop its data per deletionPolicy, then let the Realm go. */
  private async finalize(realm: RealmResource): Promise<void> {
    const { kube, store, control } = this.deps;
    const { tenant, realmId } = desiredRealm(realm);
    const key = realmKey(tenant, realmId);
    const policy = deletionPolicyOf(realm);
    const owner = realmIdOwner(realm, this.deps.realmsOf?.(tenant) ?? []);
    if (owner !== null) {
      // Another Realm declares this realm id: revoke what this Realm's Secret holds, if anything, and leave the realm alone.
      await this.revokeOwnCredentials(realm, tenant, realmId);
      await kube.deleteSecret(tenant, credentialsSecretName(realm.metadata.name));
      await kube.setFinalizers(realm, withFinalizer(realm.metadata.finalizers, false));
      this.deps.log.info({ realm: `${tenant}/${realmId}`, owner: owner.metadata.name }, 'Realm finalized; its realm id belongs to another Realm, left alone');
      return;
    }
    // Credentials first: the realm's tokens and realm-bound keys stop working at once.
    for (const token of await store.tokens.listByRealm(key)) {
      if (await store.tokens.delete(key, token.id)) control.announce({ kind: 'token.revoked', realm: key, hash: token.hash });
    }
    let keysDropped = false;
    for (const signingKey of await store.signingKeys.listByTenant(tenant)) {
      if (signingKey.realm === realmId && (await store.signingKeys.delete(tenant, signingKey.id))) keysDropped = true;
    }
    if (keysDropped) control.announce({ kind: 'keys.changed', tenant });
    if (policy === 'Delete') {
      try {
        await this.deps.realms.delete(tenant, realmId);
      } catch (err) {
        if (!(err instanceof LocusError && err.code === 'not_found')) throw err;
      }
    }
    await kube.deleteSecret(tenant, credentialsSecretName(realm.metadata.name));
    await this.event(
      realm,
      'Normal',
      'Deleted',
      policy === 'Delete' ? `realm ${realmId}: credentials revoked, data deleted` : `realm ${realmId}: credentials revoked, data retained (deletionPolicy Retain)`,
    );
    await kube.setFinalizers(realm, withFinalizer(realm.metadata.finalizers, false));
    this.deps.log.info({ realm: `${tenant}/${realmId}`, policy }, 'realm finalized');
  }

  /** Revokes the token and the realm-bound key this Realm's own credentials Secret names (only if they are this realm's). */
  private async revokeOwnCredentials(realm: RealmResource, tenant: string, realmId: string): Promise<void> {
    const secret = await this.deps.kube.getSecret(tenant, credentialsSecretName(realm.metadata.name));
    if (secret === null || realm.metadata.uid === undefined || !secret.ownerUids.includes(realm.metadata.uid)) return;
    const key = realmKey(tenant, realmId);
    const valid = await this.credentialsValid(secret, tenant, realmId);
    const tokenId = secret.data[CREDENTIAL_KEYS.tokenId];
    const keyId = secret.data[CREDENTIAL_KEYS.keyId];
    if (valid.token && tokenId !== undefined && (await this.deps.store.tokens.delete(key, tokenId))) {
      this.deps.control.announce({ kind: 'token.revoked', realm: key, hash: hashSecret(secret.data[CREDENTIAL_KEYS.token] ?? '') });
    }
    if (valid.key && keyId !== undefined && (await this.deps.store.signingKeys.delete(tenant, keyId))) {
      this.deps.control.announce({ kind: 'keys.changed', tenant });
    }
  }

  private async writeStatus(realm: RealmResource, outcome: Outcome): Promise<void> {
    const status = statusFor(realm, outcome, new Date(this.deps.clock()).toISOString());
    if (sameStatus(realm.status, status)) return;
    await this.deps.kube.patchStatus(realm, status);
  }

  /** Best effort: a failed reconcile's status and Warning Event (the failure itself is retried). */
  private async reportFailure(realm: RealmResource, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const reason = err instanceof ReconcileError ? err.reason : 'ReconcileFailed';
    let realmId = realm.metadata.name;
    let provisioned = false;
    try {
      const desired = desiredRealm(realm);
      realmId = desired.realmId;
      // A Realm refused for its realm id has provisioned nothing, whatever the store holds under that id.
      provisioned = !(err instanceof ReconcileError) && (await this.deps.store.realms.get(realmKey(desired.tenant, desired.realmId))) !== null;
    } catch {
      provisioned = false;
    }
    try {
      await this.writeStatus(realm, { kind: 'failed', realmId, provisioned, reason, message });
    } catch (statusErr) {
      this.deps.log.warn({ err: statusErr }, 'could not write the status of a failed reconcile');
    }
    await this.event(realm, 'Warning', reason, message);
  }

  private async event(realm: RealmResource, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    try {
      await this.deps.kube.recordEvent(realm, type, reason, message);
    } catch (err) {
      this.deps.log.warn({ err, reason }, 'could not record an Event');
    }
  }
}
