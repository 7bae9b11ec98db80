/**
 * What the reconciler needs from the Kubernetes API: Realms (read, finalizers, status),
 * Secrets and Events. The adapter (kube-client.ts) speaks to a real API server through
 * @kubernetes/client-node; unit tests of layers above may fake it.
 */
import type { RealmResource, RealmStatus } from '../kube/realm-resource.js';

/** A Secret as the operator reads it: its data decoded to UTF-8 strings. */
export interface SecretObject {
  name: string;
  namespace: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** UIDs of its owners (owner references). */
  ownerUids: string[];
  data: Record<string, string>;
}

/** A Secret as the operator writes it (data as UTF-8 strings; the adapter encodes them). */
export interface SecretWrite {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  data: Record<string, string>;
  /** The Realm that owns it (garbage-collected with it). */
  owner?: RealmResource;
  /** For a replace: the version read, so that a concurrent change is a conflict. */
  resourceVersion?: string;
}

/** 409 from the API server: someone else changed or created the object; the reconcile is retried. */
export class KubeConflict extends Error {
  override readonly name = 'KubeConflict';
}

export type EventType = 'Normal' | 'Warning';

export interface KubePort {
  /** The Realm now (not a cached copy), or null when it is gone. */
  getRealm(namespace: string, name: string): Promise<RealmResource | null>;
  /** Sets metadata.finalizers (conflict when the Realm changed since `realm` was read); the updated Realm. */
  setFinalizers(realm: RealmResource, finalizers: string[]): Promise<RealmResource>;
  /** Writes the status subresource. */
  patchStatus(realm: RealmResource, status: RealmStatus): Promise<void>;
  getSecret(namespace: string, name: string): Promise<SecretObject | null>;
  /** Creates it; KubeConflict when it exists. */
  createSecret(secret: SecretWrite): Promise<void>;
  /** Replaces it (resourceVersion required); KubeConflict when it changed since. */
  replaceSecret(secret: SecretWrite & { resourceVersion: string }): Promise<void>;
  /** Deletes it; a missing one is fine. */
  deleteSecret(namespace: string, name: string): Promise<void>;
  /** Records an Event about the Realm (best effort: failures are the caller's to log). */
  recordEvent(realm: RealmResource, type: EventType, reason: string, message: string): Promise<void>;
}
