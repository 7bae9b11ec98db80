/**
 * The Realm CustomResourceDefinition, built from the constants of realm-resource.ts. This is
 * the source of crds/realms.locus.dev.yaml (scripts/generate-crd.mjs writes it; a unit test
 * fails when the file differs, and checks at compile time that the schema's properties are
 * exactly the fields of RealmSpec, RealmSpecSettings and RealmStatus). Pure.
 */
import {
  CONDITION_STATUSES,
  DEFAULT_DELETION_POLICY,
  DELETION_POLICIES,
  REALM_GROUP,
  REALM_ID_MAX_LENGTH,
  REALM_ID_PATTERN,
  REALM_KIND,
  REALM_LABEL_MAX_LENGTH,
  REALM_PHASES,
  REALM_PLURAL,
  REALM_SHORT_NAME,
  REALM_VERSION,
  SETTINGS_BOUNDS,
  SUPERSEDED_CREDENTIALS_MAX,
} from './realm-resource.js';
import { toYaml } from './yaml.js';

/** The message the API server returns when an update changes, adds or removes spec.realmId. */
export const REALM_ID_IMMUTABLE_MESSAGE =
  "spec.realmId is immutable: it names the realm's data; create another Realm for another id";

/** The messages of the status rules: what a Ready Realm promises whoever reads it. */
export const READY_NEEDS_SECRET_MESSAGE = 'status.phase Ready needs status.realmId and status.credentialsSecret';
export const READY_NEEDS_CONDITION_MESSAGE = 'status.phase Ready needs a Ready condition with status True';

/** spec.settings: one property per RealmSpecSettings field. */
export const realmSettingsSchema = {
  type: 'object',
  description: 'The realm settings; an absent field keeps the service default.',
  properties: {
    connectionTimeoutSeconds: {
      type: 'integer',
      format: 'int64',
      minimum: SETTINGS_BOUNDS.connectionTimeoutSeconds.min,
      maximum: SETTINGS_BOUNDS.connectionTimeoutSeconds.max,
      description: 'Connection timeout in seconds (up to a year). Default 120.',
    },
    historyRetentionDays: {
      type: 'integer',
      format: 'int64',
      minimum: SETTINGS_BOUNDS.historyRetentionDays.min,
      maximum: SETTINGS_BOUNDS.historyRetentionDays.max,
      description: 'Days of location history kept; 0 keeps everything. Default 30.',
    },
    rateLimitPerSecond: {
      type: 'integer',
      format: 'int64',
      minimum: SETTINGS_BOUNDS.rateLimitPerSecond.min,
      maximum: SETTINGS_BOUNDS.rateLimitPerSecond.max,
      description: "Requests per second per token; absent: the server's LOCUS_RATE_LIMIT.",
    },
    filterIndexes: {
      type: 'array',
      maxItems: SETTINGS_BOUNDS.filterIndexes.maxItems,
      items: { type: 'string', minLength: 1 },
      description:
        'Data fields whose list filters are served by an index (docs/api.md, "Filter indexes"): distinct field names, not id or label, without , = < >. Absent: none.',
    },
  },
} as const;

/** spec: one property per RealmSpec field. */
export const realmSpecSchema = {
  type: 'object',
  description: 'The desired realm.',
  properties: {
    realmId: {
      type: 'string',
      minLength: 1,
      maxLength: REALM_ID_MAX_LENGTH,
      pattern: REALM_ID_PATTERN,
      description:
        'The realm id within the tenant (this namespace); absent: metadata.name. Letters, digits, ".", "_" and "-", starting and ending with a letter or digit. Immutable.',
    },
    label: { type: 'string', maxLength: REALM_LABEL_MAX_LENGTH, description: 'A label for people.' },
    deletionPolicy: {
      type: 'string',
      enum: [...DELETION_POLICIES],
      default: DEFAULT_DELETION_POLICY,
      description: "What deleting the Realm does to the realm's data: Retain keeps it, Delete drops it.",
    },
    settings: realmSettingsSchema,
  },
  'x-kubernetes-validations': [
    {
      // A transition rule: only checked on updates, across the old and the new spec.
      rule: 'has(self.realmId) == has(oldSelf.realmId) && (!has(self.realmId) || self.realmId == oldSelf.realmId)',
      message: REALM_ID_IMMUTABLE_MESSAGE,
      reason: 'FieldValueForbidden',
    },
  ],
} as const;

const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', maxLength: 316 },
    status: { type: 'string', enum: [...CONDITION_STATUSES] },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', maxLength: 1024 },
    message: { type: 'string', maxLength: 32768 },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
  },
} as const;

/** status: one property per RealmStatus field. */
export const realmStatusSchema = {
  type: 'object',
  description: 'What the operator observed and did.',
  properties: {
    phase: { type: 'string', enum: [...REALM_PHASES] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    realmId: { type: 'string' },
    credentialsSecret: { type: 'string' },
    credentials: {
      type: 'object',
      description: 'The ids (never the secrets) of the token and realm-bound key the credentials Secret holds, and of superseded ones, each revoked at its revokeAt.',
      properties: {
        tokenId: { type: 'string', maxLength: 64 },
        keyId: { type: 'string', maxLength: 64 },
        superseded: {
          type: 'array',
          maxItems: SUPERSEDED_CREDENTIALS_MAX,
          items: {
            type: 'object',
            required: ['id', 'revokeAt'],
            properties: { id: { type: 'string', maxLength: 64 }, revokeAt: { type: 'string', format: 'date-time' } },
          },
        },
      },
    },
    conditions: {
      type: 'array',
      maxItems: 16,
      items: conditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
  // Rules across fields: a Ready Realm names its realm and its credentials, and says so in its conditions.
  'x-kubernetes-validations': [
    {
      rule: "!has(self.phase) || self.phase != 'Ready' || (has(self.realmId) && has(self.credentialsSecret))",
      message: READY_NEEDS_SECRET_MESSAGE,
    },
    {
      rule: "!has(self.phase) || self.phase != 'Ready' || (has(self.conditions) && self.conditions.exists(c, c.type == 'Ready' && c.status == 'True'))",
      message: READY_NEEDS_CONDITION_MESSAGE,
    },
  ],
} as const;

export const REALM_CRD_NAME = `${REALM_PLURAL}.${REALM_GROUP}`;

/** The CustomResourceDefinition object (apiextensions.k8s.io/v1). */
export function realmCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: REALM_CRD_NAME },
    spec: {
      group: REALM_GROUP,
      scope: 'Namespaced',
      names: {
        kind: REALM_KIND,
        listKind: `${REALM_KIND}List`,
        plural: REALM_PLURAL,
        singular: REALM_KIND.toLowerCase(),
        shortNames: [REALM_SHORT_NAME],
        categories: ['locus'],
      },
      versions: [
        {
          name: REALM_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Realm ID', type: 'string', jsonPath: '.status.realmId' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Deletion', type: 'string', jsonPath: '.spec.deletionPolicy', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A locus realm in this namespace (the tenant): its data, credentials and settings.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: realmSpecSchema,
                status: realmStatusSchema,
              },
            },
          },
        },
      ],
    },
  };
}

/** crds/realms.locus.dev.yaml, as generated. */
export function realmCrdYaml(): string {
  const header = '# Generated from internal/kube/realm-crd.ts by scripts/generate-crd.mjs: edit that file, not this one.\n';
  return toYaml(realmCrd() as Parameters<typeof toYaml>[0], header);
}
