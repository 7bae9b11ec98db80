/**
 * The listeners of one process: HTTP (REST, `/v1/http`, the WebSocket upgrade) and raw TCP
 * for the v1 protocol. Built first, then bound; a port that cannot be bound is a clear error
 * naming its variable, and what was bound is closed again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { BuildInfo } from '../build-info.js';
import type { Config } from '../config/config.js';
import { listenFailure } from '../config/listen-errors.js';
import { answerRefused, capConnections } from '../transport/http/connection-cap.js';
import { v1HttpRouter } from '../transport/http/v1-http.js';
import { createRestApp, type RestMetricsHooks } from '../transport/rest/app.js';
import { listenTcp, type TcpListener } from '../transport/tcp/tcp-transport.js';
import { attachWebSocket, type WsEndpoint } from '../transport/ws/ws-transport.js';
import type { Services } from './services.js';
import type { V1 } from './v1.js';

export interface Listeners {
  readonly http: Server;
  /** Every socket of the HTTP listener, upgraded ones and refused ones included (closeAllConnections knows neither). */
  readonly httpSockets: ReadonlySet<Socket>;
  readonly ws: WsEndpoint;
  readonly tcp: TcpListener;
  /** `http://host:port` of the HTTP listener. */
  readonly httpUrl: string;
  readonly httpPort: number;
  /** Refuses new work from now on: /readyz answers 503, upgrades are refused. */
  stopAccepting(): void;
}

/** A closing v1 connection gets this long to flush before it is cut. */
const closeGraceMs = (config: Config): number => Math.min(2000, config.shutdownTimeoutMs);

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

/** The HTTP server: the REST app (with `/v1/http`), the connection cap and the WebSocket endpoint. */
function httpServer(config: Config, s: Services, v1: V1, build: BuildInfo, logger: Logger, isAccepting: () => boolean, metrics: RestMetricsHooks | null): { http: Server; httpSockets: ReadonlySet<Socket>; ws: WsEndpoint } {
  const { access, realms, tenants, objects, areas, instructions, store } = s;
  const { maxBodyBytes, maxActions, authCookieName } = config;
  const app = createRestApp({
    access,
    realms,
    tenants,
    objects,
    areas,
    instructions,
    store,
    logger,
    maxBodyBytes,
    maxPage: config.maxPage,
    build,
    isAccepting,
    busHealth: () => s.bus.health(),
    authCookieName,
    openConnections: () => v1.gateway.stats().connections,
    corsOrigins: config.corsOrigins,
    metrics,
    routers: [v1HttpRouter({ access, dispatcher: v1.dispatcher, logger, maxBodyBytes, maxActions, authCookieName })],
    ...(s.tracing === null ? {} : { traceRequests: s.tracing.restRequests }),
  });
  const http = createServer(
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
  http.keepAliveTimeout = 65_000;
  const cap = capConnections(http, config.maxHttpConnections);
  const ws = attachWebSocket(http, v1.gateway, {
    maxMessageBytes: config.maxMessageBytes,
    idleTimeoutMs: config.idleTimeoutMs,
    partialTimeoutMs: config.partialTimeoutMs,
    closeGraceMs: closeGraceMs(config),
    refusal: (socket) => (cap.refuses(socket) ? cap.refusal : null),
  });
  return { http, httpSockets: cap.sockets, ws };
}

/** Binds the HTTP and TCP listeners; on failure closes what was bound and throws the listen error. */
export async function startListeners(config: Config, s: Services, v1: V1, build: BuildInfo, logger: Logger, metrics: RestMetricsHooks | null = null): Promise<Listeners> {
  let accepting = true;
  const { http, httpSockets, ws } = httpServer(config, s, v1, build, logger, () => accepting, metrics);
  const address = await listen(http, config.httpPort, config.host);
  let tcp: TcpListener;
  try {
    tcp = await listenTcp(v1.gateway, {
      host: config.host,
      port: config.tcpPort,
      maxLineBytes: config.maxMessageBytes,
      closeGraceMs: closeGraceMs(config),
      partialTimeoutMs: config.partialTimeoutMs,
    });
  } catch (err) {
    await new Promise((resolve) => http.close(resolve));
    throw err instanceof Error ? listenFailure(err, { portVariable: 'LOCUS_TCP_PORT', port: config.tcpPort, host: config.host }) : err;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const httpUrl = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  return {
    http,
    httpSockets,
    ws,
    tcp,
    httpUrl,
    httpPort: address.port,
    stopAccepting: () => {
      accepting = false;
      ws.stopAccepting();
    },
  };
}
