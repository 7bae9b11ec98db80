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
import { LocalEventBus } from './events/local-bus.js';
import { GeofenceEngine } from './geofence/geofence-engine.js';
import { createLogger } from './observability/logger.js';
import { SEMI_SPACE_MIB, SERVER_NODE_OPTIONS, semiSpaceOption } from './runtime/node-options.js';
import { Access } from './service/access.js';
import { AreaService } from './service/areas.js';
import { systemClock, type Clock } from './service/clock.js';
import { HistoryRetention } from './service/history-retention.js';
import { ObjectService } from './service/objects.js';
import { RealmService, type IssuedToken } from './service/realms.js';
import { Subscriptions } from './service/subscriptions.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/port.js';
import { Dispatcher } from './transport/actions/dispatcher.js';
import { ActionGateway, type GatewayStats } from './transport/actions/gateway.js';
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

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function start(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = openStore(config.store, {
    claimOwnership: true,
    onBackgroundError: (err) => logger.error({ err }, 'store background work failed; retrying'),
  });
  // Change records → geofence engine → event bus → subscriptions of each connection.
  const bus = new LocalEventBus((err) => logger.error({ err }, 'event delivery failed'));
  const listener = new GeofenceEngine(store.areas, bus, (err, realm) =>
    logger.error({ err, realm }, 'loading areas for geofences failed'),
  );
  const realms = new RealmService(store, clock, listener);
  const access = new Access(
    new Authenticator(store.tokens, config.adminToken),
    realms,
    new RateLimiter(),
    { rateLimit: config.rateLimit, rateBurst: config.rateBurst },
    clock,
  );
  const objects = new ObjectService(
    store,
    clock,
    { maxBulk: config.maxBulk, maxPage: config.maxPage, maxFilterConditions: config.maxFilterConditions, maxVertices: config.maxVertices },
    listener,
  );
  const areas = new AreaService(store, { maxPage: config.maxPage, maxVertices: config.maxVertices }, listener);
  const demoToken = config.demoRealm ? await realms.ensureDemo() : null;
  const build = readBuildInfo();
  const subscriptions = new Subscriptions(bus);
  const dispatcher = new Dispatcher({
    access,
    objects,
    areas,
    subscriptions,
    clock,
    onInternalError: (err) => logger.error({ err }, 'v1 action failed'),
  });
  const gateway = new ActionGateway(
    {
      access,
      dispatcher,
      subscriptions,
      build,
      logger,
      limits: {
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        sendBufferBytes: config.sendBufferBytes,
        slowConsumerMs: config.slowConsumerMs,
        tokenRecheckMs: config.tokenRecheckMs,
        // A connection's messages under way hold at most one message's worth of text.
        pipelineChars: config.maxMessageBytes,
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
    objects,
    areas,
    store,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    build,
    isAccepting: () => accepting,
    routers: [v1HttpRouter({ access, dispatcher, maxBodyBytes: config.maxBodyBytes })],
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  const ws = attachWebSocket(server, gateway, {
    maxMessageBytes: config.maxMessageBytes,
    idleTimeoutMs: config.idleTimeoutMs,
    closeGraceMs,
  });
  let address: AddressInfo;
  let tcp: TcpListener;
  try {
    address = await listen(server, config.httpPort, config.host);
  } catch (err) {
    await store.close();
    throw err;
  }
  try {
    tcp = await listenTcp(gateway, { host: config.host, port: config.tcpPort, maxLineBytes: config.maxMessageBytes, closeGraceMs });
  } catch (err) {
    await new Promise((resolve) => server.close(resolve));
    await store.close();
    throw err;
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
        expired();
      }, config.shutdownTimeoutMs);
      // v1 connections answer the message in hand, then get a close (code 1013 on WebSocket).
      await Promise.race([gateway.shutdown(), deadline]);
      ws.destroyAll();
      await Promise.all([closed, tcpClosed]);
      clearTimeout(timer);
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
    demoToken,
    v1Stats: () => gateway.stats(),
    close,
  };
}
