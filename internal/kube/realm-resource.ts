/**
 * The `Realm` custom resource (group locus.dev, version v1alpha1): its TypeScript types, the
 * constants its CRD schema is built from (realm-crd.ts), and the mapping of its spec onto the
 * domain's realm settings. Pure.
 *
 * The CRD in crds/realms.locus.dev.yaml is generated from realm-crd.ts (scripts/generate-crd.mjs)
 * and a unit test fails when the file, these types, the schema or the domain's settings rules
 * drift apart.
 */
import { MAX_FILTER_INDEXES } from '../domain/realm-settings.js';
import type { RealmSettings } from '../domain/types.js';

export const REALM_GROUP = 'locus.dev';
export const REALM_VERSION = 'v1alpha1';
export const REALM_API_VERSION = `${REALM_GROUP}/${REALM_VERSION}`;
export const REALM_KIND = 'Realm';
export const REALM_PLURAL = 'realms';
export const REALM_SHORT_NAME = 'rlm';

/**
 * A realm id declared in Kubernetes: ASCII letters, digits, `.`, `_` and `-`, starting and ending
 * with a letter or digit, 1..253 characters. A subset of the domain's ids (1..256 UTF-8 bytes
 * without control characters), so every id the CRD accepts the service accepts too; it also
 * fits in labels of Secrets and Events and in storage names.
 */
export const REALM_ID_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$';
export const REALM_ID_MAX_LENGTH = 253;

/** Most characters of `spec.label`. */
export const REALM_LABEL_MAX_LENGTH = 1024;

/** What deleting the Realm does to the realm's data: keep it (default) or drop it. */
export const DELETION_POLICIES = ['Retain', 'Delete'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];
export const DEFAULT_DELETION_POLICY: DeletionPolicy = 'Retain';

/** Bounds of the settings, the same as the domain's (domain/realm-settings.ts; a test checks). */
export const SETTINGS_BOUNDS = {
  connectionTimeoutSeconds: { min: 1, max: 31_536_000 },
  historyRetentionDays: { min: 0, max: 36_500 },
  /** Requests per second per token; no maximum beyond a JavaScript safe integer. */
  rateLimitPerSecond: { min: 1, max: Number.MAX_SAFE_INTEGER },
  /** Data fields a realm indexes for its filters (domain MAX_FILTER_INDEXES). */
  filterIndexes: { maxItems: MAX_FILTER_INDEXES },
} as const;

/** The realm's settings as declared; an absent field keeps the service's default. */
export interface RealmSpecSettings {
  /** Seconds (1..31,536,000). Accepted and stored like the admin API does; unused by presence. */
  connectionTimeoutSeconds?: number;
  /** Days of history kept (0..36,500); 0 keeps everything. */
  historyRetentionDays?: number;
  /** Requests per second per token (≥ 1); absent: the server's LOCUS_RATE_LIMIT. */
  rateLimitPerSecond?: number;
  /** Data fields whose filters an index serves (domain/realm-settings.ts); absent: none. */
  filterIndexes?: string[];
}

export interface RealmSpec {
  /** The realm's id within the tenant (the namespace); absent: metadata.name. Immutable. */
  realmId?: string;
  /** A label for people; absent: none. */
  label?: string;
  /** Default Retain. */
  deletionPolicy?: DeletionPolicy;
  settings?: RealmSpecSettings;
}

export const REALM_PHASES = ['Pending', 'Provisioning', 'Ready', 'Degraded', 'Deleting'] as const;
export type RealmPhase = (typeof REALM_PHASES)[number];

export const CONDITION_TYPES = ['Ready', 'Provisioned', 'Degraded'] as const;
export type RealmConditionType = (typeof CONDITION_TYPES)[number];
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** A metav1.Condition. */
export interface RealmCondition {
  type: string;
  status: (typeof CONDITION_STATUSES)[number];
  /** RFC 3339 time. */
  lastTransitionTime: string;
  /** CamelCase reason. */
  reason: string;
  message: string;
  observedGeneration?: number;
}

/** The most superseded credentials a Realm's status lists (beyond it, the earliest due are revoked at once). */
export const SUPERSEDED_CREDENTIALS_MAX = 100;

/** A token or realm-bound key the credentials Secret no longer holds, still accepted until revokeAt. */
export interface SupersededCredential {
  /** A token id (`tok_…`) or a signing key id (`key_…`). */
  id: string;
  /** RFC 3339 time. */
  revokeAt: string;
}

/**
 * The ids of the credentials the operator issued for a Realm: the ones its Secret holds, and the
 * superseded ones awaiting revocation. Kept in the status because a deleted Secret takes its ids
 * with it, and the operator must still revoke what it held.
 */
export interface RealmCredentialsStatus {
  tokenId?: string;
  keyId?: string;
  superseded?: SupersededCredential[];
}

export interface RealmStatus {
  phase?: RealmPhase;
  /** metadata.generation of the spec the operator last reconciled. */
  observedGeneration?: number;
  /** The realm id in effect (spec.realmId or metadata.name). */
  realmId?: string;
  /** The Secret in the same namespace holding the realm's credentials. */
  credentialsSecret?: string;
  /** The ids of the issued credentials (never their secrets). */
  credentials?: RealmCredentialsStatus;
  conditions?: RealmCondition[];
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RealmResource {
  apiVersion: typeof REALM_API_VERSION;
  kind: typeof REALM_KIND;
  metadata: ObjectMeta;
  spec: RealmSpec;
  status?: RealmStatus;
}

/** The realm id a Realm declares: spec.realmId, or its name. */
export function realmIdOf(resource: Pick<RealmResource, 'metadata' | 'spec'>): string {
  return resource.spec.realmId ?? resource.metadata.name;
}

/**
 * The domain settings a spec declares (absent fields keep `base`). The API server has checked
 * the spec against the CRD's schema; the domain's parseRealmSettings checks it again when the
 * operator applies it.
 */
export function realmSettingsOf(spec: RealmSpec, base: RealmSettings): RealmSettings {
  const settings = spec.settings ?? {};
  const out: RealmSettings = {
    connectionTimeout: settings.connectionTimeoutSeconds ?? base.connectionTimeout,
    historyRetentionDays: settings.historyRetentionDays ?? base.historyRetentionDays,
    rateLimit: settings.rateLimitPerSecond ?? base.rateLimit,
  };
  const fields = settings.filterIndexes ?? base.filterIndexes ?? [];
  if (fields.length > 0) out.filterIndexes = [...fields];
  return out;
}
