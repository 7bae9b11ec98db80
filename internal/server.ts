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
import { createLogger } from './observability/logger.js';
import { Access } from './service/access.js';
import { AreaService } from './service/areas.js';
import { systemClock, type Clock } from './service/clock.js';
import { ObjectService } from './service/objects.js';
import { RealmService, type IssuedToken } from './service/realms.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/port.js';
import { createRestApp } from './transport/rest/app.js';

export interface RunningServer {
  /** `http://host:port` of the HTTP listener. */
  readonly httpUrl: string;
  readonly httpPort: number;
  readonly store: Store;
  readonly realms: RealmService;
  /** The demo realm's token when this start created it. */
  readonly demoToken: IssuedToken | null;
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
  const store = openStore(config.store);
  const realms = new RealmService(store, clock);
  const access = new Access(
    new Authenticator(store.tokens, config.adminToken),
    realms,
    new RateLimiter(),
    { rateLimit: config.rateLimit, rateBurst: config.rateBurst },
    clock,
  );
  const objects = new ObjectService(store, clock, { maxBulk: config.maxBulk, maxPage: config.maxPage });
  const areas = new AreaService(store, { maxPage: config.maxPage, maxVertices: config.maxVertices });
  const demoToken = config.demoRealm ? await realms.ensureDemo() : null;

  let accepting = true;
  const app = createRestApp({
    access,
    realms,
    objects,
    areas,
    store,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    build: readBuildInfo(),
    isAccepting: () => accepting,
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  let address: AddressInfo;
  try {
    address = await listen(server, config.httpPort, config.host);
  } catch (err) {
    await store.close();
    throw err;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const httpUrl = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  logger.info({ httpUrl, store: config.store.replace(/\/\/[^@]*@/, '//***@') }, 'locus listening');

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      accepting = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await closed;
      clearTimeout(timer);
      await store.close();
      logger.info('locus stopped');
    })();
    return closing;
  };

  return { httpUrl, httpPort: address.port, store, realms, demoToken, close };
}
