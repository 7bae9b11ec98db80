/**
 * The metrics of one API process (LOCUS_METRICS): the registry (registry.ts) and what feeds
 * it, each at one seam: the store and the bus as decorators of their ports, the change
 * stream's listener, the REST observer (called by the access log's finish hook), the v1 observer, and the gauges computed at
 * scrape time. server.ts builds it only while LOCUS_METRICS is true: otherwise none of this
 * is installed and /metrics does not exist.
 */
import type { RestMetricsHooks } from '../../transport/rest/app.js';
import type { EventBus } from '../../events/port.js';
import type { ChangeListener } from '../../service/changes.js';
import type { Store } from '../../store/port.js';
import type { V1HandlerTable } from '../../transport/actions/v1-handler.js';
import type { V1Observer } from '../../transport/actions/v1-observer.js';
import { MeteredBus } from './bus-metrics.js';
import { ChangeMetrics } from './change-metrics.js';
import { InstructionMetrics } from './instruction-metrics.js';
import { RealmLabels } from './realm-labels.js';
import { MetricsRegistry } from './registry.js';
import { RestMetrics } from './rest-metrics.js';
import { meteredStore } from './store-metrics.js';
import { V1Metrics } from './v1-metrics.js';

export interface ServerMetricsOptions {
  /** LOCUS_METRICS_REALM_LABEL */
  realmLabel: boolean;
  /** LOCUS_METRICS_MAX_REALMS */
  maxRealms: number;
  build: { version: string; revision: string };
  /** How long the realm count of `locus_realms` is reused (default 10 s). */
  realmCountTtlMs?: number;
  /** How long a scrape waits for the store's health check (default 2 s). */
  storePingTimeoutMs?: number;
}

export class ServerMetrics {
  readonly registry: MetricsRegistry;
  /** For the bus (open-bus.ts `onDelivered`): each realm's events delivered here, seconds after their publish. */
  readonly onBusDelivered: (lagSeconds: number) => void;
  /** The change stream's listener. */
  readonly changes: ChangeListener;
  /** The instruction engine's observer. */
  readonly instructions: InstructionMetrics;
  /** The observer of answered REST requests and the GET /metrics handler (transport/rest/app.ts). */
  readonly rest: RestMetricsHooks;
  private readonly realms: RealmLabels | null;

  constructor(private readonly options: ServerMetricsOptions) {
    const registry = new MetricsRegistry({ realmLabel: options.realmLabel });
    this.registry = registry;
    const { counters, histograms, gauges } = registry;
    this.realms = options.realmLabel ? new RealmLabels(options.maxRealms) : null;
    gauges.buildInfo.set({ version: options.build.version, revision: options.build.revision, nodejs: process.version }, 1);
    // Series of small fixed label sets start at 0, so that rate() and alerts see them from the start.
    for (const protocol of ['rest', 'v1']) {
      counters.rateLimited.cell(protocol);
      for (const reason of ['missing', 'invalid', 'forbidden']) counters.authFailures.cell(protocol, reason);
    }
    for (const transport of ['ws', 'tcp']) {
      gauges.connectionsOpen.set({ transport }, 0);
      counters.connectionsOpened.cell(transport);
      counters.subscriberDrops.cell(transport);
    }
    const lag = histograms.busDeliveryLag.cell();
    this.onBusDelivered = (seconds) => lag.observe(seconds);
    this.changes = new ChangeMetrics(counters.locationsIngested, this.realms);
    this.instructions = new InstructionMetrics(registry, this.realms);
    const restMetrics = new RestMetrics({
      requests: counters.httpRequests,
      duration: histograms.httpRequestDuration,
      rateLimited: counters.rateLimited,
      authFailures: counters.authFailures,
    });
    this.rest = {
      answered: restMetrics.answered,
      route: (_req, res, next) => {
        registry.scrape().then(
          (text) => res.set('Content-Type', registry.contentType).set('Cache-Control', 'no-store').send(text),
          (err: unknown) => next(err),
        );
      },
    };
  }

  /**
   * The store the services use: every call timed. `locus_store_up` and `locus_realms` are
   * read from `store` itself at scrape time, so a scrape adds nothing to the timings.
   */
  store(store: Store): Store {
    const timeoutMs = this.options.storePingTimeoutMs ?? 2000;
    this.registry.collectGauge('storeUp', async (gauge) => {
      gauge.set((await answersWithin(store.ping(), timeoutMs)) ? 1 : 0);
    });
    const ttl = this.options.realmCountTtlMs ?? 10_000;
    let counted: { at: number; count: number } | null = null;
    this.registry.collectGauge('realms', async (gauge) => {
      const now = performance.now();
      if (counted === null || now - counted.at >= ttl) {
        const count = await store.realms.list().then((realms) => realms.length, () => null);
        // A store that does not answer keeps the last count (locus_store_up tells the outage).
        if (count !== null) counted = { at: now, count };
      }
      if (counted !== null) gauge.set(counted.count);
    });
    return meteredStore(store, this.registry.histograms.storeOperationDuration);
  }

  /** The bus the services use: publishes timed, geofence crossings counted; connection state and drops read at scrape time. */
  bus(bus: EventBus): EventBus {
    this.registry.collectGauge('busConnected', (gauge) => gauge.set(bus.health().ok ? 1 : 0));
    const dropped = this.registry.counters.busMessagesDropped;
    const droppedCell = dropped.cell();
    dropped.collect = () => {
      droppedCell.value = Math.max(droppedCell.value, bus.health().dropped ?? 0);
    };
    return new MeteredBus(bus, this.registry.histograms.busPublishDuration.cell(), this.registry.counters.geofenceEvents, this.realms);
  }

  /** The observer of the v1 dispatcher and connections; `handlers` bounds the `typ` and `act` labels. */
  v1Observer(handlers: V1HandlerTable): V1Observer {
    const known = new Map<string, ReadonlySet<string>>();
    for (const [typ, acts] of Object.entries(handlers)) known.set(typ, new Set(Object.keys(acts)));
    const { counters, histograms, gauges } = this.registry;
    return new V1Metrics(
      {
        actions: counters.v1Actions,
        duration: histograms.v1ActionDuration,
        connectionsOpen: gauges.connectionsOpen,
        connectionsOpened: counters.connectionsOpened,
        subscriberDrops: counters.subscriberDrops,
        rateLimited: counters.rateLimited,
        authFailures: counters.authFailures,
      },
      known,
    );
  }
}

/** True when `ping` resolves within `ms`. */
async function answersWithin(ping: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([ping.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
