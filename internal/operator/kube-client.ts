/**
 * The KubePort on a real API server, through @kubernetes/client-node: Realms through
 * CustomObjectsApi (merge patches for finalizers and status), Secrets and Events through
 * CoreV1Api. Uses only what the chart's RBAC grants (charts/locus/templates/rbac.yaml).
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import { REALM_API_VERSION, REALM_GROUP, REALM_KIND, REALM_PLURAL, REALM_VERSION, type RealmResource, type RealmStatus } from '../kube/realm-resource.js';
import { KubeConflict, type EventType, type KubePort, type SecretObject, type SecretWrite } from './kube-port.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** The field manager the API server records for the operator's writes (managedFields). */
const fieldManager = 'locus-operator';

/** The HTTP status of a client-node failure, or null. */
export function statusOf(err: unknown): number | null {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : null;
}

/** A client-node failure as an Error with a short message (the API server's, not the whole body). */
export function kubeError(err: unknown, what: string): Error {
  const status = statusOf(err);
  if (status === 409) return new KubeConflict(`${what}: conflict (changed or created concurrently)`);
  if (err instanceof ApiException) {
    let message = '';
    try {
      const body: unknown = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      message = (body as { message?: string } | null)?.message ?? '';
    } catch {
      message = '';
    }
    return new Error(`${what}: HTTP ${err.code}${message === '' ? '' : `: ${message}`}`);
  }
  return new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
}

function decode(data: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) out[key] = Buffer.from(value, 'base64').toString('utf8');
  return out;
}

function encode(data: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) out[key] = Buffer.from(value, 'utf8').toString('base64');
  return out;
}

function secretBody(secret: SecretWrite): V1Secret {
  const owner = secret.owner;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: secret.name,
      namespace: secret.namespace,
      labels: secret.labels,
      annotations: secret.annotations,
      ...(secret.resourceVersion === undefined ? {} : { resourceVersion: secret.resourceVersion }),
      ...(owner?.metadata.uid === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: REALM_API_VERSION, kind: REALM_KIND, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
            ],
          }),
    },
    data: encode(secret.data),
  };
}

export class KubeClient implements KubePort {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;

  constructor(
    config: KubeConfig,
    /** Who records Events (the operator's identity). */
    private readonly instance: string,
  ) {
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
  }

  async getRealm(namespace: string, name: string): Promise<RealmResource | null> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: REALM_GROUP, version: REALM_VERSION, namespace, plural: REALM_PLURAL, name })) as RealmResource;
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw kubeError(err, `reading Realm ${namespace}/${name}`);
    }
  }

  async setFinalizers(realm: RealmResource, finalizers: string[]): Promise<RealmResource> {
    const { name, namespace = '', resourceVersion } = realm.metadata;
    try {
      return (await this.custom.patchNamespacedCustomObject(
        {
          group: REALM_GROUP,
          version: REALM_VERSION,
          namespace,
          plural: REALM_PLURAL,
          name,
          body: { metadata: { finalizers, ...(resourceVersion === undefined ? {} : { resourceVersion }) } },
          fieldManager,
        },
        mergePatch,
      )) as RealmResource;
    } catch (err) {
      throw kubeError(err, `updating the finalizers of Realm ${namespace}/${name}`);
    }
  }

  async patchStatus(realm: RealmResource, status: RealmStatus): Promise<void> {
    const { name, namespace = '' } = realm.metadata;
    try {
      await this.custom.patchNamespacedCustomObjectStatus(
        // Conditions are replaced whole (a merge patch replaces lists).
        { group: REALM_GROUP, version: REALM_VERSION, namespace, plural: REALM_PLURAL, name, body: { status }, fieldManager },
        mergePatch,
      );
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw kubeError(err, `writing the status of Realm ${namespace}/${name}`);
    }
  }

  async getSecret(namespace: string, name: string): Promise<SecretObject | null> {
    let secret: V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ namespace, name });
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw kubeError(err, `reading Secret ${namespace}/${name}`);
    }
    return {
      name,
      namespace,
      resourceVersion: secret.metadata?.resourceVersion ?? '',
      labels: secret.metadata?.labels ?? {},
      annotations: secret.metadata?.annotations ?? {},
      ownerUids: (secret.metadata?.ownerReferences ?? []).map((ref) => ref.uid),
      data: decode(secret.data),
    };
  }

  async createSecret(secret: SecretWrite): Promise<void> {
    try {
      await this.core.createNamespacedSecret({ namespace: secret.namespace, body: secretBody(secret), fieldManager });
    } catch (err) {
      throw kubeError(err, `creating Secret ${secret.namespace}/${secret.name}`);
    }
  }

  async replaceSecret(secret: SecretWrite & { resourceVersion: string }): Promise<void> {
    try {
      await this.core.replaceNamespacedSecret({ namespace: secret.namespace, name: secret.name, body: secretBody(secret), fieldManager });
    } catch (err) {
      throw kubeError(err, `updating Secret ${secret.namespace}/${secret.name}`);
    }
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    try {
      await this.core.deleteNamespacedSecret({ namespace, name });
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw kubeError(err, `deleting Secret ${namespace}/${name}`);
    }
  }

  async recordEvent(realm: RealmResource, type: EventType, reason: string, message: string): Promise<void> {
    const { name, namespace = '', uid, resourceVersion } = realm.metadata;
    const now = new Date();
    const body: CoreV1Event = {
      metadata: { generateName: `${name.slice(0, 200)}.`, namespace },
      involvedObject: {
        apiVersion: REALM_API_VERSION,
        kind: REALM_KIND,
        name,
        namespace,
        ...(uid === undefined ? {} : { uid }),
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
      },
      type,
      reason,
      message: message.slice(0, 1024),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: 'locus-operator' },
      reportingComponent: 'locus.dev/operator',
      reportingInstance: this.instance.slice(0, 128),
    };
    try {
      await this.core.createNamespacedEvent({ namespace, body });
    } catch (err) {
      throw kubeError(err, `recording an Event for Realm ${namespace}/${name}`);
    }
  }
}
