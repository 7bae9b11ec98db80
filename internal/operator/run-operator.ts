/**
 * The operator process (`node dist/cmd/operator.js`): opens the store (shared ownership) and
 * the bus the API processes use, list-watches Realms and the Secrets it keeps (all namespaces,
 * or those of LOCUS_OPERATOR_NAMESPACES) with a periodic resync, and, while it holds the leader Lease,
 * feeds their keys to the work queue whose workers reconcile them (reconciler.ts). Serves
 * /healthz, /readyz and /metrics. SIGTERM: stop the watches, let running reconciles finish,
 * release the Lease, close the store and the bus.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config.js';
import { openBus } from '../events/open-bus.js';
import type { EventBus } from '../events/port.js';
import { REALM_GROUP, REALM_PLURAL, REALM_VERSION, type RealmResource } from '../kube/realm-resource.js';
import { installSignalShutdown } from '../lifecycle/signal-shutdown.js';
import { createLogger } from '../observability/logger.js';
import { noChangeListener } from '../service/changes.js';
import { systemClock } from '../service/clock.js';
import { ControlChannel } from '../service/control.js';
import { RealmService } from '../service/realms.js';
import { TenantService } from '../service/tenants.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/port.js';
import { startHealthServer } from './health-server.js';
import { MANAGED_BY, MANAGED_BY_LABEL, realmKeysOfSecret, type WatchedSecret } from './desired-state.js';
import { KubeClient } from './kube-client.js';
import { LeaderElector, leaseApi } from './leader-election.js';
import { ListWatch } from './list-watch.js';
import { leaseNamespaceFor, loadOperatorConfig, type OperatorConfig } from './operator-config.js';
import { createOperatorMetrics, type OperatorMetrics } from './operator-metrics.js';
import { Reconciler } from './reconciler.js';
import { WorkQueue } from './work-queue.js';

/** The Realms of one namespace, or all: a list-watch feeding their keys to the work queue. */
function realmWatch(config: KubeConfig, namespace: string | null, onKey: (key: string) => void, log: Logger): ListWatch {
  const api = config.makeApiClient(CustomObjectsApi);
  const base = `/apis/${REALM_GROUP}/${REALM_VERSION}`;
  const list = async (): Promise<KubernetesListObject<KubernetesObject>> =>
    (namespace === null
      ? await api.listClusterCustomObject({ group: REALM_GROUP, version: REALM_VERSION, plural: REALM_PLURAL })
      : await api.listNamespacedCustomObject({ group: REALM_GROUP, version: REALM_VERSION, namespace, plural: REALM_PLURAL })) as KubernetesListObject<KubernetesObject>;
  const path = namespace === null ? `${base}/${REALM_PLURAL}` : `${base}/namespaces/${namespace}/${REALM_PLURAL}`;
  return new ListWatch(config, { kind: 'Realm', namespace, path, list }, (obj) => {
    const { namespace: ns, name } = obj.metadata ?? {};
    if (ns !== undefined && name !== undefined) onKey(`${ns}/${name}`);
  }, log);
}

/**
 * The Secrets the operator keeps (its label) in one namespace, or all: a change to one, a
 * deletion included, queues the Realms it concerns, so that a rotation asked on the tenant key
 * Secret, or a deleted credentials Secret, is handled at once rather than at the next resync.
 */
function secretWatch(config: KubeConfig, namespace: string | null, onSecret: (secret: WatchedSecret) => void, log: Logger): ListWatch {
  const api = config.makeApiClient(CoreV1Api);
  const labelSelector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  const list = async (): Promise<KubernetesListObject<KubernetesObject>> =>
    namespace === null ? await api.listSecretForAllNamespaces({ labelSelector }) : await api.listNamespacedSecret({ namespace, labelSelector });
  const path = namespace === null ? '/api/v1/secrets' : `/api/v1/namespaces/${namespace}/secrets`;
  return new ListWatch(config, { kind: 'Secret', namespace, path, list, labelSelector }, (obj) => {
    const { namespace: ns, name, labels, ownerReferences } = obj.metadata ?? {};
    if (ns === undefined || name === undefined) return;
    onSecret({ namespace: ns, name, labels: labels ?? {}, owners: (ownerReferences ?? []).map((o) => ({ kind: o.kind, apiVersion: o.apiVersion, name: o.name })) });
  }, log);
}

export interface RunningOperator {
  close(): Promise<void>;
}

export async function startOperator(config: OperatorConfig, logger: Logger): Promise<RunningOperator> {
  const kube = new KubeConfig();
  kube.loadFromDefault();
  const lease = leaseNamespaceFor(config.leaseNamespace, kube.getContextObject(kube.getCurrentContext())?.namespace);
  const store: Store = await openStore(config.store, {
    claimOwnership: true,
    ownership: 'shared',
    onBackgroundError: (err) => logger.warn({ err }, 'store background work failed (retried)'),
  });
  let bus: EventBus;
  try {
    bus = await openBus(config.bus, { onError: (err) => logger.warn({ err }, 'bus error'), name: `locus-operator ${config.identity}` });
  } catch (err) {
    await store.close();
    throw err;
  }
  const control = new ControlChannel(bus, (err) => logger.warn({ err }, 'control message handler failed'));
  const realms = new RealmService(store, systemClock, noChangeListener, bus, control);
  const tenants = new TenantService(store, systemClock, control);
  control.add(realms);
  const metrics: OperatorMetrics = createOperatorMetrics();
  let queue: WorkQueue | null = null;
  const scopes = config.namespaces.length === 0 ? [null] : config.namespaces;
  const realmWatches = scopes.map((ns) => realmWatch(kube, ns, (key) => queue?.add(key), logger));
  const reconciler = new Reconciler({
    kube: new KubeClient(kube, config.identity),
    store,
    realms,
    tenants,
    control,
    clock: systemClock,
    keyGraceMs: config.keyGraceMs,
    credentialsGraceMs: config.credentialsGraceMs,
    log: logger,
    realmsOf: (namespace) => realmWatches.flatMap((watch) => watch.informer.list(namespace) as unknown as RealmResource[]),
  });

  const newQueue = (): WorkQueue =>
    new WorkQueue((key) => reconciler.reconcileKey(key), {
      workers: config.workers,
      backoff: { baseMs: config.backoffBaseMs, capMs: config.backoffCapMs },
      hooks: {
        depthChanged: (depth) => metrics.queueDepth(depth),
        processed(key, outcome) {
          const seconds = outcome.durationMs / 1000;
          if (outcome.ok) {
            metrics.reconciled(outcome.requeueAfterMs === undefined ? 'success' : 'requeue', seconds);
            logger.debug({ realm: key, ms: outcome.durationMs }, 'reconciled');
          } else {
            metrics.reconciled('error', seconds);
            const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
            logger.warn({ realm: key, failures: outcome.failures, retryInMs: outcome.retryInMs, error: message }, 'reconcile failed; retrying');
          }
        },
      },
    });

  const realmNamesOf = (namespace: string): string[] =>
    realmWatches.flatMap((watch) => watch.informer.list(namespace).map((obj) => obj.metadata?.name ?? '')).filter((name) => name !== '');
  const secretWatches = scopes.map((ns) =>
    secretWatch(kube, ns, (secret) => {
      for (const key of realmKeysOfSecret(secret, realmNamesOf)) queue?.add(key);
    }, logger),
  );
  const watches = [...realmWatches, ...secretWatches];
  const enqueueAll = (): void => {
    for (const watch of realmWatches) {
      for (const obj of watch.informer.list()) {
        const { namespace, name } = obj.metadata ?? {};
        if (namespace !== undefined && name !== undefined) queue?.add(`${namespace}/${name}`);
      }
    }
  };
  const resync = setInterval(enqueueAll, config.resyncMs);
  resync.unref();

  const elector = new LeaderElector(
    leaseApi(kube),
    {
      namespace: lease.namespace,
      name: config.leaseName,
      identity: config.identity,
      durationS: config.leaseDurationS,
      renewDeadlineS: config.renewDeadlineS,
      retryPeriodS: config.retryPeriodS,
    },
    {
      started() {
        metrics.leader(true);
        queue = newQueue();
        enqueueAll();
      },
      async stopped() {
        metrics.leader(false);
        const running = queue;
        queue = null;
        await running?.close();
      },
    },
    logger,
  );

  let server: Server;
  try {
    server = await startHealthServer(config.host, config.port, {
      registry: metrics.registry,
      async notReady() {
        const leaseProblem = elector.leaseProblem();
        if (leaseProblem !== null) return `neither leading nor following: ${leaseProblem}`;
        const unsynced = watches.find((w) => !w.synced);
        if (unsynced !== undefined) return `${unsynced.describe()} is not synced`;
        try {
          await store.ping();
        } catch {
          return 'the store does not answer';
        }
        return null;
      },
    });
  } catch (err) {
    control.close();
    await bus.close();
    await store.close();
    throw new ConfigError(`LOCUS_OPERATOR_PORT=${config.port}: cannot listen (${err instanceof Error ? err.message : String(err)})`);
  }
  const address = server.address();
  logger.info(
    {
      port: typeof address === 'object' && address !== null ? address.port : config.port,
      namespaces: config.namespaces,
      identity: config.identity,
      lease: `${lease.namespace}/${config.leaseName}`,
      leaseNamespaceFrom: lease.from,
    },
    'locus operator listening',
  );
  for (const watch of watches) void watch.start();
  elector.start();

  return {
    async close() {
      clearInterval(resync);
      for (const watch of watches) await watch.stop();
      // Running reconciles finish, then the Lease is released.
      await elector.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      control.close();
      await bus.close();
      await store.close();
      logger.info('locus operator stopped');
    },
  };
}

/** `node dist/cmd/operator.js`: configuration from the environment; exit 1 on a configuration error. */
export async function runOperator(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let config: OperatorConfig;
  try {
    config = loadOperatorConfig(env);
  } catch (err) {
    process.stderr.write(`locus operator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = createLogger(config.logLevel).child({ component: 'operator' });
  let running: RunningOperator;
  try {
    running = await startOperator(config, logger);
  } catch (err) {
    logger.fatal({ err: err instanceof Error ? err.message : String(err) }, 'locus operator could not start');
    process.exitCode = 1;
    return;
  }
  installSignalShutdown({ logger, timeoutMs: config.shutdownTimeoutMs, close: () => running.close() });
}
