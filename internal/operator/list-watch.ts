/**
 * One list-watch of a kind of object (all namespaces, or one), through client-node's informer,
 * restarted after an error. Each add, update or delete is handed on as the object; `synced`
 * tells /readyz whether the cache is complete and watching.
 */
import { makeInformer, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from 'pino';

type CachedInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

export interface ListWatchSpec {
  /** What it watches, for logs and /readyz: "Realm", "Secret". */
  kind: string;
  /** null: all namespaces. */
  namespace: string | null;
  /** The watch path (`/apis/…/realms`, `/api/v1/namespaces/<ns>/secrets`). */
  path: string;
  /** The list call matching the path (and the label selector). */
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  labelSelector?: string;
}

export class ListWatch {
  readonly informer: CachedInformer;
  synced = false;
  /** Set by an error; a start whose list failed resolves all the same (client-node reports it as an error event). */
  private failed = false;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    config: KubeConfig,
    readonly spec: ListWatchSpec,
    onObject: (obj: KubernetesObject) => void,
    private readonly log: Logger,
  ) {
    this.informer = makeInformer(config, spec.path, spec.list, spec.labelSelector);
    this.informer.on('add', onObject);
    this.informer.on('update', onObject);
    this.informer.on('delete', onObject);
    this.informer.on('error', (err) => {
      this.synced = false;
      this.failed = true;
      if (this.stopped) return;
      this.log.warn({ err: err instanceof Error ? err.message : String(err), namespace: spec.namespace }, `${spec.kind} watch failed; restarting it`);
      this.restartTimer = setTimeout(() => void this.start(), 2000);
    });
  }

  /** "the Realm watch of namespace x", for /readyz. */
  describe(): string {
    return `the ${this.spec.kind} watch${this.spec.namespace === null ? '' : ` of namespace ${this.spec.namespace}`}`;
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    try {
      // Resolves once the list is in and the watch is open, or once the list failed (an error event).
      this.failed = false;
      await this.informer.start();
      this.synced = !this.failed;
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, `${this.spec.kind} list-watch could not start; retrying`);
      if (!this.stopped) this.restartTimer = setTimeout(() => void this.start(), 2000);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    await this.informer.stop();
  }
}
