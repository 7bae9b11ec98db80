/**
 * Wires one API process together and runs it: open the store, open the bus, build the
 * services, start the listeners; graceful shutdown (stop accepting, finish in-flight
 * requests, close the bus and the store). Each step is its own module in internal/startup/.
 */
import type { Logger } from 'pino';
import { readBuildInfo, readBuildRevision } from './build-info.js';
import type { Config } from './config/config.js';
import { createLogger } from './observability/logger.js';
import { startTracing } from './observability/tracing/start-tracing.js';
import type { Tracing } from './observability/tracing/tracing.js';
import { ServerMetrics } from './observability/metrics/server-metrics.js';
import { SEMI_SPACE_MIB, SERVER_NODE_OPTIONS, semiSpaceOption } from './runtime/node-options.js';
import { systemClock, type Clock } from './service/clock.js';
import { HistoryRetention } from './service/history-retention.js';
import type { PresenceRegistry } from './service/presence-registry.js';
import type { PubSub } from './service/pubsub.js';
import type { InstructionRuntime } from './instructions/engine/instruction-runtime.js';
import type { IssuedToken, RealmService } from './service/realms.js';
import type { TenantService } from './service/tenants.js';
import { startListeners } from './startup/listeners.js';
import { openServerBus, openServerStore } from './startup/open.js';
import { buildServices } from './startup/services.js';
import { shutdownOf } from './startup/shutdown.js';
import { buildV1 } from './startup/v1.js';
import type { Store } from './store/port.js';
import type { GatewayStats } from './transport/actions/gateway.js';

export { connectionDrainMs } from './startup/shutdown.js';

export interface RunningServer {
  /** `http://host:port` of the HTTP listener. */
  readonly httpUrl: string;
  readonly httpPort: number;
  /** Port of the raw TCP listener of the v1 protocol. */
  readonly tcpPort: number;
  readonly store: Store;
  readonly realms: RealmService;
  readonly tenants: TenantService;
  /** Realm pub/sub (v1 `rea` `sub`/`uns`/`pub`). */
  readonly pubsub: PubSub;
  /** Presence: data-provider connections (JWT `dpv`) → connectionStatus. */
  readonly presence: PresenceRegistry;
  /** The demo realm's token when this start created it. */
  readonly demoToken: IssuedToken | null;
  /** The instruction engine of this process (its leases, its realms' engines). */
  readonly instructions: InstructionRuntime;
  /** The process's metrics (GET /metrics); null while LOCUS_METRICS is false. */
  readonly metrics: ServerMetrics | null;
  /** Open v1 WebSocket and TCP connections, and events dropped for slow consumers. */
  v1Stats(): GatewayStats;
  /** Graceful shutdown; safe to call more than once. */
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * Tracing on the caller's tracer (the caller closes it), or null for none; absent: as the
   * OTEL_* environment asks (observability/tracing/start-tracing.ts), closed with the server.
   */
  tracing?: Tracing | null;
}

/** The tracing a server runs with, and whether it started it (and so closes it). */
async function tracingFor(options: StartOptions, logger: Logger): Promise<{ tracing: Tracing | null; owned: boolean }> {
  if (options.tracing !== undefined) return { tracing: options.tracing, owned: false };
  const { tracing, decision } = await startTracing(process.env);
  if (tracing !== null) logger.info({ reason: decision.reason }, 'tracing on (OpenTelemetry)');
  return { tracing, owned: true };
}

/** Warns when started without the Node options that keep garbage-collection pauses short. */
function warnAboutNodeOptions(logger: Logger): void {
  const semiSpace = semiSpaceOption();
  if (semiSpace === null || semiSpace < SEMI_SPACE_MIB) {
    logger.warn(
      { semiSpaceMiB: semiSpace },
      `started without ${SERVER_NODE_OPTIONS.join(' ')} (npm start passes it; see README): more garbage-collection pauses, slower writes`,
    );
  }
}

export async function start(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const { tracing, owned } = await tracingFor(options, logger);
  const ownTracing = owned ? tracing : null;
  const build = readBuildInfo();
  // LOCUS_METRICS=false: nothing of the metrics is built or installed.
  const metrics = config.metrics
    ? new ServerMetrics({ realmLabel: config.metricsRealmLabel, maxRealms: config.metricsMaxRealms, build: { version: build.version, revision: readBuildRevision() } })
    : null;
  const store = await openServerStore(config, logger, tracing).catch(async (err: unknown) => {
    await ownTracing?.close();
    throw err;
  });
  const bus = await openServerBus(config, logger, tracing, metrics?.onBusDelivered).catch(async (err: unknown) => {
    // A bus that cannot connect stops start-up: give the store back.
    await store.close();
    await ownTracing?.close();
    throw err;
  });
  // The services see the store and the bus through the metrics' decorators, when there are
  // metrics (around the tracing ones, when tracing is on).
  const services = buildServices(
    config,
    metrics?.store(store) ?? store,
    metrics?.bus(bus) ?? bus,
    clock,
    logger,
    tracing,
    metrics?.changes,
    metrics === null ? null : { registry: metrics.registry, observer: metrics.instructions },
  );
  const demoToken = config.demoRealm ? await services.realms.ensureDemo() : null;
  const v1 = buildV1(config, services, build, logger, metrics);
  let listeners;
  try {
    listeners = await startListeners(config, services, v1, build, logger, metrics?.rest ?? null);
  } catch (err) {
    services.control.close();
    await services.delivery.close();
    await bus.close();
    await store.close();
    await ownTracing?.close();
    throw err;
  }
  logger.info({ httpUrl: listeners.httpUrl, tcpPort: listeners.tcp.port, store: config.store.replace(/\/\/[^@]*@/, '//***@') }, 'locus listening');
  warnAboutNodeOptions(logger);
  // Takes the instruction leases it can get and evaluates those realms' instructions.
  services.instructionRuntime.start();
  // Deletes fixes older than each realm's historyRetentionDays: now, then hourly.
  const retention = new HistoryRetention(services.store, clock, { logger });
  retention.start();
  return {
    httpUrl: listeners.httpUrl,
    httpPort: listeners.httpPort,
    tcpPort: listeners.tcp.port,
    store,
    realms: services.realms,
    tenants: services.tenants,
    pubsub: services.pubsub,
    presence: services.presence,
    instructions: services.instructionRuntime,
    demoToken,
    metrics,
    v1Stats: () => v1.gateway.stats(),
    close: shutdownOf({ services, v1, listeners, retention, logger, shutdownTimeoutMs: config.shutdownTimeoutMs, tracing: ownTracing }),
  };
}
