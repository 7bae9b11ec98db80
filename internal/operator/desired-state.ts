/**
 * What a Realm asks for, decided without touching anything (pure): the next step of its
 * reconcile, the settings the realm must have, the names and contents of its Secrets, when
 * the tenant key is to be rotated and which retired keys are due to go, and the status to
 * report. The reconciler (reconciler.ts) carries these decisions out against the store and the
 * API server; unit tests check them here.
 */
import { createHash } from 'node:crypto';
import { defaultRealmSettings } from '../domain/realm-settings.js';
import type { RealmSettings } from '../domain/types.js';
import {
  DEFAULT_DELETION_POLICY,
  REALM_GROUP,
  REALM_KIND,
  realmIdOf,
  realmSettingsOf,
  type DeletionPolicy,
  type RealmCondition,
  type RealmConditionType,
  type RealmPhase,
  type RealmResource,
  type RealmCredentialsStatus,
  type RealmStatus,
  type SupersededCredential,
  SUPERSEDED_CREDENTIALS_MAX,
} from '../kube/realm-resource.js';

/** Held on every Realm the operator manages until its cleanup has run. */
export const FINALIZER = 'locus.dev/realm-cleanup';
/** A new value (on a Realm, or on the tenant key Secret) asks for a new tenant signing key. */
export const ROTATE_ANNOTATION = 'locus.dev/rotate-tenant-key';
/** On the tenant key Secret: the rotation values already carried out (JSON array of strings). */
export const ROTATIONS_APPLIED_ANNOTATION = 'locus.dev/rotations-applied';
/** On the tenant key Secret: retired key ids and when each stops being accepted (JSON object kid → RFC 3339). */
export const RETIRED_KEYS_ANNOTATION = 'locus.dev/retired-keys';
/** The Secret of a namespace (a tenant) holding the tenant's JWT signing key. */
export const TENANT_KEY_SECRET = 'locus-tenant-key';
/** Labels on the Secrets the operator keeps. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'locus-operator';
export const REALM_LABEL = 'locus.dev/realm';
/** How many applied rotation values the tenant key Secret remembers. */
export const ROTATIONS_REMEMBERED = 20;
/** Data keys of a retired tenant key in its Secret: `retired.<kid>`. */
export const RETIRED_PREFIX = 'retired.';

/** The keys of a Realm's credentials Secret. */
export const CREDENTIAL_KEYS = {
  tenant: 'tenant',
  realm: 'realm',
  tokenId: 'tokenId',
  token: 'token',
  keyId: 'keyId',
  signingKey: 'signingKey',
} as const;

/** The keys of the tenant key Secret. */
export const TENANT_KEY_KEYS = { tenant: 'tenant', keyId: 'keyId', signingKey: 'signingKey' } as const;

export type NextStep =
  /** Gone already, or being deleted without our finalizer: nothing to do. */
  | 'nothing'
  /** Being deleted and holding our finalizer: clean up, then remove it. */
  | 'finalize'
  /** Not yet holding our finalizer: add it before anything is provisioned. */
  | 'add-finalizer'
  /** Make the store and the Secrets match the spec. */
  | 'reconcile';

export function nextStep(realm: RealmResource | null): NextStep {
  if (realm === null) return 'nothing';
  const holds = (realm.metadata.finalizers ?? []).includes(FINALIZER);
  if (realm.metadata.deletionTimestamp !== undefined) return holds ? 'finalize' : 'nothing';
  return holds ? 'reconcile' : 'add-finalizer';
}

/** The finalizers with ours added or removed (others kept in order). */
export function withFinalizer(finalizers: readonly string[] | undefined, present: boolean): string[] {
  const others = (finalizers ?? []).filter((f) => f !== FINALIZER);
  return present ? [...others, FINALIZER] : others;
}

export function deletionPolicyOf(realm: RealmResource): DeletionPolicy {
  return realm.spec.deletionPolicy ?? DEFAULT_DELETION_POLICY;
}

/** What the store must hold for this Realm. */
export interface DesiredRealm {
  /** The tenant: the Realm's namespace. */
  tenant: string;
  /** The realm id within the tenant. */
  realmId: string;
  settings: RealmSettings;
  /** The label to set; undefined leaves the stored one. */
  label: string | undefined;
}

export function desiredRealm(realm: RealmResource): DesiredRealm {
  const tenant = realm.metadata.namespace;
  if (tenant === undefined || tenant === '') throw new Error(`Realm ${realm.metadata.name} has no namespace`);
  return {
    tenant,
    realmId: realmIdOf(realm),
    // An absent field is the service default, so removing it from the spec reverts it.
    settings: realmSettingsOf(realm.spec, defaultRealmSettings),
    label: realm.spec.label,
  };
}

export function sameSettings(a: RealmSettings, b: RealmSettings): boolean {
  const fields = (s: RealmSettings): string => (s.filterIndexes ?? []).join(',');
  return (
    a.connectionTimeout === b.connectionTimeout &&
    a.historyRetentionDays === b.historyRetentionDays &&
    a.rateLimit === b.rateLimit &&
    fields(a) === fields(b)
  );
}

/**
 * The Realm that owns the realm id `realm` declares, when it is another one: of the Realms of
 * the namespace declaring that id and not being deleted, the oldest (creation time, then name).
 * Null when `realm` owns it (or nobody else declares it). Two Realms must not share one realm:
 * the later one is refused, and deleting it leaves the owner's realm alone.
 */
export function realmIdOwner(realm: RealmResource, namespaceRealms: readonly RealmResource[]): RealmResource | null {
  const id = realmIdOf(realm);
  const order = (r: RealmResource): string => `${r.metadata.creationTimestamp ?? ''}\u0000${r.metadata.name}`;
  let owner: RealmResource | null = null;
  for (const other of namespaceRealms) {
    if (other.metadata.name === realm.metadata.name || other.metadata.deletionTimestamp !== undefined || realmIdOf(other) !== id) continue;
    if (owner === null || order(other) < order(owner)) owner = other;
  }
  if (owner === null) return null;
  // A Realm being deleted owns nothing; otherwise the older one wins.
  if (realm.metadata.deletionTimestamp !== undefined) return owner;
  return order(owner) < order(realm) ? owner : null;
}

/** `<name>-locus-credentials`, shortened with a hash when the Realm's name is too long for a Secret name. */
export function credentialsSecretName(realmName: string): string {
  const suffix = '-locus-credentials';
  if (realmName.length + suffix.length <= 253) return `${realmName}${suffix}`;
  const hash = createHash('sha256').update(realmName).digest('hex').slice(0, 10);
  return `${realmName.slice(0, 253 - suffix.length - 11)}-${hash}${suffix}`;
}

/** A label value's longest length (Kubernetes refuses a Secret with a longer one). */
const LABEL_VALUE_MAX = 63;

/**
 * The labels of a Realm's credentials Secret: managed-by, and the Realm's name where it fits
 * a label value (a Realm name may be up to 253 characters; the owner reference names the
 * Realm in any case, so a longer name is left out rather than cut).
 */
export function credentialsSecretLabels(realmName: string): Record<string, string> {
  const labels: Record<string, string> = { [MANAGED_BY_LABEL]: MANAGED_BY };
  if (realmName.length <= LABEL_VALUE_MAX) labels[REALM_LABEL] = realmName;
  return labels;
}

/** What the Secret watch sees of a Secret: enough to find the Realms it concerns. */
export interface WatchedSecret {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  owners: { kind: string; apiVersion: string; name: string }[];
}

/**
 * The Realms (`namespace/name` keys) a change of one of the operator's Secrets concerns: every
 * Realm of the namespace for its tenant key Secret (any of them carries out a rotation or
 * re-creates it); the owning Realm for a credentials Secret (owner reference, else its label).
 */
export function realmKeysOfSecret(secret: WatchedSecret, realmNamesOf: (namespace: string) => string[]): string[] {
  const names =
    secret.name === TENANT_KEY_SECRET
      ? realmNamesOf(secret.namespace)
      : [
          ...secret.owners.filter((o) => o.kind === REALM_KIND && o.apiVersion.split('/')[0] === REALM_GROUP).map((o) => o.name),
          ...(secret.labels[REALM_LABEL] === undefined ? [] : [secret.labels[REALM_LABEL]]),
        ];
  return [...new Set(names)].map((name) => `${secret.namespace}/${name}`);
}

/** The applied rotation values recorded on the tenant key Secret (bad JSON reads as none). */
export function appliedRotations(annotations: Record<string, string> | undefined): string[] {
  const raw = annotations?.[ROTATIONS_APPLIED_ANNOTATION];
  if (raw === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The rotation value to carry out now, or null: the Realm's or the Secret's annotation value
 * when it is non-empty and not among those already applied. The Realm's wins when both ask.
 */
export function rotationRequest(
  realmAnnotations: Record<string, string> | undefined,
  secretAnnotations: Record<string, string> | undefined,
): string | null {
  const applied = appliedRotations(secretAnnotations);
  for (const value of [realmAnnotations?.[ROTATE_ANNOTATION], secretAnnotations?.[ROTATE_ANNOTATION]]) {
    if (value !== undefined && value.trim() !== '' && !applied.includes(value)) return value;
  }
  return null;
}

/** The applied values with `value` added, the oldest dropped past ROTATIONS_REMEMBERED. */
export function withAppliedRotation(annotations: Record<string, string> | undefined, value: string): string {
  return JSON.stringify([...appliedRotations(annotations), value].slice(-ROTATIONS_REMEMBERED));
}

/** Retired key ids and when each expires (ms since the epoch); bad entries are dropped. */
export function retiredKeys(annotations: Record<string, string> | undefined): Map<string, number> {
  const out = new Map<string, number>();
  const raw = annotations?.[RETIRED_KEYS_ANNOTATION];
  if (raw === undefined) return out;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
    for (const [kid, at] of Object.entries(parsed as Record<string, unknown>)) {
      const ms = typeof at === 'string' ? Date.parse(at) : Number.NaN;
      if (Number.isFinite(ms)) out.set(kid, ms);
    }
  } catch {
    return out;
  }
  return out;
}

export function retiredKeysAnnotation(retired: ReadonlyMap<string, number>): string {
  return JSON.stringify(Object.fromEntries([...retired].map(([kid, ms]) => [kid, new Date(ms).toISOString()])));
}

/** Which retired keys are due (expired at `now`), and when the next one is (ms from now; null: none left). */
export function dueRetiredKeys(retired: ReadonlyMap<string, number>, now: number): { due: string[]; nextInMs: number | null } {
  const due: string[] = [];
  let next: number | null = null;
  for (const [kid, at] of retired) {
    if (at <= now) due.push(kid);
    else next = next === null ? at - now : Math.min(next, at - now);
  }
  return { due, nextInMs: next };
}

/** The ids a credentials Secret holds now. */
export interface IssuedCredentials {
  tokenId: string;
  keyId: string;
}

/** The issued ids a Realm's status records, and its superseded credentials (none when absent). */
export function credentialsLedger(status: RealmStatus | undefined): RealmCredentialsStatus & { superseded: SupersededCredential[] } {
  const recorded = status?.credentials ?? {};
  return { ...recorded, superseded: [...(recorded.superseded ?? [])] };
}

/**
 * The ids that the Secret's current credentials replace: those the Secret held before and those
 * the status recorded as issued, but for the current ones and those already superseded.
 */
export function replacedIds(ledger: RealmCredentialsStatus, previous: Partial<IssuedCredentials> | null, current: IssuedCredentials): string[] {
  const listed = new Set((ledger.superseded ?? []).map((s) => s.id));
  const out: string[] = [];
  for (const id of [previous?.tokenId, previous?.keyId, ledger.tokenId, ledger.keyId]) {
    if (id === undefined || id === '' || id === current.tokenId || id === current.keyId || listed.has(id) || out.includes(id)) continue;
    out.push(id);
  }
  return out;
}

/**
 * The ledger once `ids` are superseded at `revokeAtMs` and `current` is what the Secret holds.
 * Past SUPERSEDED_CREDENTIALS_MAX entries, the earliest due are returned to be revoked at once.
 */
export function supersede(
  ledger: RealmCredentialsStatus,
  current: IssuedCredentials,
  ids: readonly string[],
  revokeAtMs: number,
): { credentials: RealmCredentialsStatus & { superseded: SupersededCredential[] }; revokeNow: string[] } {
  const revokeAt = new Date(revokeAtMs).toISOString();
  const all = [...(ledger.superseded ?? []), ...ids.map((id) => ({ id, revokeAt }))].sort((a, b) => Date.parse(a.revokeAt) - Date.parse(b.revokeAt));
  const excess = Math.max(0, all.length - SUPERSEDED_CREDENTIALS_MAX);
  return {
    credentials: { tokenId: current.tokenId, keyId: current.keyId, superseded: all.slice(excess) },
    revokeNow: all.slice(0, excess).map((s) => s.id),
  };
}

/** Which superseded credentials are due (revokeAt reached; an unreadable time counts as due), and when the next one is. */
export function dueSuperseded(superseded: readonly SupersededCredential[], now: number): { due: string[]; nextInMs: number | null } {
  const at = new Map<string, number>();
  for (const s of superseded) {
    const ms = Date.parse(s.revokeAt);
    at.set(s.id, Number.isFinite(ms) ? ms : now);
  }
  return dueRetiredKeys(at, now);
}

/** The outcome a status is written for. */
export type Outcome =
  | { kind: 'ready'; realmId: string; credentialsSecret: string; credentials: RealmCredentialsStatus }
  | { kind: 'failed'; realmId: string; provisioned: boolean; reason: string; message: string; credentialsSecret?: string };

function condition(type: RealmConditionType, ok: boolean, reason: string, message: string, generation: number | undefined, now: string, previous: RealmCondition[] | undefined): RealmCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  // lastTransitionTime moves only when the status changes.
  const lastTransitionTime = before !== undefined && before.status === status ? before.lastTransitionTime : now;
  return { type, status, lastTransitionTime, reason, message, ...(generation === undefined ? {} : { observedGeneration: generation }) };
}

/** The status to report for an outcome; conditions keep their transition times while unchanged. */
export function statusFor(realm: RealmResource, outcome: Outcome, now: string): RealmStatus {
  const generation = realm.metadata.generation;
  const previous = realm.status?.conditions;
  if (outcome.kind === 'ready') {
    return {
      phase: 'Ready',
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      realmId: outcome.realmId,
      credentialsSecret: outcome.credentialsSecret,
      credentials: outcome.credentials,
      conditions: [
        condition('Ready', true, 'Reconciled', 'the realm is provisioned and its credentials are in place', generation, now, previous),
        condition('Provisioned', true, 'RealmProvisioned', 'the tenant, the realm and its settings are in the store', generation, now, previous),
        condition('Degraded', false, 'Healthy', 'the last reconcile succeeded', generation, now, previous),
      ],
    };
  }
  const phase: RealmPhase = outcome.provisioned ? 'Degraded' : 'Provisioning';
  const credentialsSecret = outcome.credentialsSecret ?? realm.status?.credentialsSecret;
  return {
    phase,
    // observedGeneration stays at the generation last reconciled in full.
    ...(realm.status?.observedGeneration === undefined ? {} : { observedGeneration: realm.status.observedGeneration }),
    realmId: outcome.realmId,
    ...(credentialsSecret === undefined ? {} : { credentialsSecret }),
    // What was issued stays recorded through failures: it is what must be revoked later.
    ...(realm.status?.credentials === undefined ? {} : { credentials: realm.status.credentials }),
    conditions: [
      condition('Ready', false, outcome.reason, outcome.message, generation, now, previous),
      condition(
        'Provisioned',
        outcome.provisioned,
        outcome.provisioned ? 'RealmProvisioned' : outcome.reason,
        outcome.provisioned ? 'the tenant, the realm and its settings are in the store' : outcome.message,
        generation,
        now,
        previous,
      ),
      condition('Degraded', true, outcome.reason, outcome.message, generation, now, previous),
    ],
  };
}

/** True when two statuses report the same thing (so no write is needed). */
export function sameStatus(a: RealmStatus | undefined, b: RealmStatus): boolean {
  return JSON.stringify(normalize(a ?? {})) === JSON.stringify(normalize(b));
}

function normalize(status: RealmStatus): unknown {
  const conditions = [...(status.conditions ?? [])]
    .sort((x, y) => x.type.localeCompare(y.type))
    .map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime, c.observedGeneration ?? null]);
  const credentials = status.credentials === undefined ? null : [status.credentials.tokenId ?? null, status.credentials.keyId ?? null, status.credentials.superseded ?? []];
  return [status.phase ?? null, status.observedGeneration ?? null, status.realmId ?? null, status.credentialsSecret ?? null, credentials, conditions];
}
