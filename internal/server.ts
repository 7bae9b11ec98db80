/**
 * Wires the embedded service together and runs it: store, services, HTTP listener,
 * graceful shutdown (stop accepting, finish in-flight requests, close the store).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticator.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { readBuildInfo } from './build-info.js';
import type { Config } from './config/config.js';
import { listenFailure } from './config/listen-errors.js';
import { openBus } from './events/open-bus.js';
import { GeofenceEngine } from './geofence/geofence-engine.js';
import { createLogger } from './observability/logger.js';
import { SEMI_SPACE_MIB, SERVER_NODE_OPTIONS, semiSpaceOption } from './runtime/node-options.js';
import { Access } from './service/access.js';
import { AreaService } from './service/areas.js';
import { systemClock, type Clock } from './service/clock.js';
import { HistoryRetention } from './service/history-retention.js';
import { ObjectService } from './service/objects.js';
import { LiveSubscriptions } from './service/live/live-subscriptions.js';
import { PresenceRegistry } from './service/presence-registry.js';
import { PubSub } from './service/pubsub.js';
import { RealmSearch } from './service/realm-search.js';
import { RealmService, type IssuedToken } from './service/realms.js';
import { TenantService } from './service/tenants.js';
import { Subscriptions } from './service/subscriptions.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/port.js';
import { Dispatcher } from './transport/actions/dispatcher.js';
import { ActionGateway, type GatewayStats } from './transport/actions/gateway.js';
import { v1Handlers } from './transport/actions/handlers/index.js';
import { answerRefused, capConnections } from './transport/http/connection-cap.js';
import { v1HttpRouter } from './transport/http/v1-http.js';
import { createRestApp } from './transport/rest/app.js';
import { listenTcp, type TcpListener } from './transport/tcp/tcp-transport.js';
import { attachWebSocket } from './transport/ws/ws-transport.js';

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
  /** Open v1 WebSocket and TCP connections, and events dropped for slow consumers. */
  v1Stats(): GatewayStats;
  /** Graceful shutdown; safe to call more than once. */
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
}

/**
 * How long open connections may take to finish when shutting down: the shutdown timeout
 * less a quarter of it (at most 2 s) kept for closing the store, so that a drain that uses
 * all its time still ends with a clean close rather than the deadline's exit code 1.
 */
export function connectionDrainMs(shutdownTimeoutMs: number): number {
  return shutdownTimeoutMs - Math.min(2000, Math.floor(shutdownTimeoutMs / 4));
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => reject(listenFailure(err, { portVariable: 'LOCUS_HTTP_PORT', port, host }));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function start(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  // Change records → geofence engine → event bus → subscriptions of each connection.
  // Opened first: a bus that cannot connect stops start-up before the store is claimed.
  const bus = await openBus(config.bus, { onError: (err) => logger.error({ err }, 'event delivery failed'), log: logger });
  const store = openStore(config.store, {
    claimOwnership: true,
    // A bus between processes (NATS) lets several servers share one SQLite file (npm run cluster).
    ownership: config.bus === 'local' ? 'exclusive' : 'shared',
    onBackgroundError: (err) => logger.error({ err }, 'store background work failed; retrying'),
  });
  const pubsub = new PubSub(bus);
  // Presence claims name realms as their tenant knows them: resolved within the principal's tenant.
  const presence: PresenceRegistry = new PresenceRegistry({
    bus,
    objects: store.objects,
    resolveRealm: async (principal, name): Promise<{ key: string } | null> => {
      const realm = await realms.findIn(principal.tenant, name);
      return realm === null ? null : { key: realm.id };
    },
    onError: (err) => logger.error({ err }, 'presence transition failed'),
    onTruncated: (realm, limit) => logger.warn({ realm, limit }, 'presence change touched more objects than it announces'),
  });
  const listener = new GeofenceEngine(
    store.areas,
    bus,
    (err, realm) => logger.error({ err, realm }, 'loading areas for geofences failed'),
    presence,
  );
  const realms = new RealmService(store, clock, listener, bus);
  const tenants = new TenantService(store, clock);
  const access = new Access(
    new Authenticator(store.tokens, config.adminToken, { signingKeys: store.signingKeys, jwtSecret: config.jwtSecret, clock }),
    realms,
    new RateLimiter(),
    {
      rateLimit: config.rateLimit,
      rateBurst: config.rateBurst,
      authFailureRate: config.authFailureRate,
      authFailureBurst: config.authFailureBurst,
    },
    clock,
  );
  const objects = new ObjectService(
    store,
    clock,
    { maxBulk: config.maxBulk, maxPage: config.maxPage, maxFilterConditions: config.maxFilterConditions, maxVertices: config.maxVertices, maxFutureSkewS: config.maxFutureSkewS },
    listener,
    presence,
  );
  const areas = new AreaService(store, { maxPage: config.maxPage, maxVertices: config.maxVertices }, listener);
  const demoToken = config.demoRealm ? await realms.ensureDemo() : null;
  const build = readBuildInfo();
  const subscriptions = new Subscriptions(bus);
  const live = new LiveSubscriptions(
    { bus, objects: store.objects, areas: store.areas, presence, onError: (err) => logger.error({ err }, 'subscription update failed') },
    { maxVertices: config.maxVertices, maxConditions: config.maxFilterConditions },
  );
  const dispatcher = new Dispatcher({
    access,
    handlers: v1Handlers({
      access,
      objects,
      areas,
      realms,
      search: new RealmSearch(store),
      subscriptions,
      pubsub,
      live,
      presence,
      limits: { maxPage: config.maxPage, maxFilterConditions: config.maxFilterConditions, maxVertices: config.maxVertices },
      clock,
      build,
    }),
    onInternalError: (err) => logger.error({ err }, 'v1 action failed'),
  });
  const gateway = new ActionGateway(
    {
      access,
      dispatcher,
      subscriptions,
      build,
      logger,
      presence,
      limits: {
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        sendBufferBytes: config.sendBufferBytes,
        slowConsumerMs: config.slowConsumerMs,
        tokenRecheckMs: config.tokenRecheckMs,
        // A connection's messages under way hold at most one message's worth of text.
        pipelineChars: config.maxMessageBytes,
        maxActions: config.maxActions,
      },
    },
    config.maxConnections,
  );
  // A closing v1 connection gets this long to flush before it is cut.
  const closeGraceMs = Math.min(2000, config.shutdownTimeoutMs);

  let accepting = true;
  const app = createRestApp({
    access,
    realms,
    tenants,
    objects,
    areas,
    store,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    maxPage: config.maxPage,
    build,
    isAccepting: () => accepting,
    busHealth: () => bus.health(),
    openConnections: () => gateway.stats().connections,
    corsOrigins: config.corsOrigins,
    authCookieName: config.authCookieName,
    routers: [v1HttpRouter({ access, dispatcher, logger, maxBodyBytes: config.maxBodyBytes, maxActions: config.maxActions, authCookieName: config.authCookieName })],
  });
  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      // Node looks for requests over their timeouts this often (30 s by default, which
      // would let a short LOCUS_HEADERS_TIMEOUT_MS run up to 30 s over).
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (cap.refuses(req.socket)) answerRefused(res, cap.refusal);
      else app(req, res);
    },
  );
  server.keepAliveTimeout = 65_000;
  // Also every socket of the HTTP listener, upgraded ones and those refused an upgrade
  // included (closeAllConnections knows neither), so that shutdown can cut them all.
  const cap = capConnections(server, config.maxHttpConnections);
  const httpSockets = cap.sockets;
  const ws = attachWebSocket(server, gateway, {
    maxMessageBytes: config.maxMessageBytes,
    idleTimeoutMs: config.idleTimeoutMs,
    partialTimeoutMs: config.partialTimeoutMs,
    closeGraceMs,
    refusal: (socket) => (cap.refuses(socket) ? cap.refusal : null),
  });
  let address: AddressInfo;
  let tcp: TcpListener;
  try {
    address = await listen(server, config.httpPort, config.host);
  } catch (err) {
    await bus.close();
    await store.close();
    throw err;
  }
  try {
    tcp = await listenTcp(gateway, { host: config.host, port: config.tcpPort, maxLineBytes: config.maxMessageBytes,
      closeGraceMs,
      partialTimeoutMs: config.partialTimeoutMs,
    });
  } catch (err) {
    await new Promise((resolve) => server.close(resolve));
    await bus.close();
    await store.close();
    throw err instanceof Error ? listenFailure(err, { portVariable: 'LOCUS_TCP_PORT', port: config.tcpPort, host: config.host }) : err;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const httpUrl = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  logger.info({ httpUrl, tcpPort: tcp.port, store: config.store.replace(/\/\/[^@]*@/, '//***@') }, 'locus listening');
  const semiSpace = semiSpaceOption();
  if (semiSpace === null || semiSpace < SEMI_SPACE_MIB) {
    logger.warn(
      { semiSpaceMiB: semiSpace },
      `started without ${SERVER_NODE_OPTIONS.join(' ')} (npm start passes it; see README): more garbage-collection pauses, slower writes`,
    );
  }
  // Deletes fixes older than each realm's historyRetentionDays: now, then hourly.
  const retention = new HistoryRetention(store, clock, { logger });
  retention.start();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      accepting = false;
      ws.stopAccepting();
      const tcpClosed = tcp.stopAccepting();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let expired: () => void = () => undefined;
      const deadline = new Promise<void>((resolve) => (expired = resolve));
      const timer = setTimeout(() => {
        server.closeAllConnections();
        ws.destroyAll();
        tcp.destroyAll();
        for (const socket of httpSockets) socket.destroy();
        expired();
      }, connectionDrainMs(config.shutdownTimeoutMs));
      // v1 connections answer the message in hand, then get a close (code 1013 on WebSocket).
      await Promise.race([gateway.shutdown(), deadline]);
      ws.destroyAll();
      // Once the connections are cut there is nothing left to wait for: a listener's close
      // callback may still be pending on a socket that is being torn down.
      await Promise.race([Promise.all([closed, tcpClosed]), deadline]);
      // Closed connections' presence transitions read the store: let them finish first.
      await Promise.race([presence.idle(), deadline]);
      clearTimeout(timer);
      // Other processes drop this one's presence claims at once, not when the lease runs out.
      presence.close();
      await bus.close();
      await retention.stop();
      await store.close();
      logger.info('locus stopped');
    })();
    return closing;
  };

  return {
    httpUrl,
    httpPort: address.port,
    tcpPort: tcp.port,
    store,
    realms,
    tenants,
    pubsub,
    presence,
    demoToken,
    v1Stats: () => gateway.stats(),
    close,
  };
}
