/**
 * A cluster on one machine: nats-server, several API processes (dist/cmd/server.js) sharing
 * one store and coordinating through NATS, and HAProxy in front of them. `npm run cluster`
 * (cmd/cluster.ts) runs one for a person; the cluster tests and benches run one each.
 *
 * Start order: nats-server; the first API process alone (it creates or migrates the store);
 * the others together; HAProxy; then the launcher waits until HAProxy sees every API
 * process up on both backends. Stop order is the reverse, each process asked with SIGTERM
 * first (the API processes drain their connections).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_OPTIONS } from '../runtime/node-options.js';
import { haproxyConfig, parseShowStat, type ServerState } from './haproxy-config.js';
import { ManagedProcess, type LineSink, type ProcessExit } from './managed-process.js';
import { defaultBasePort, freePortPlan, portPlan, type PortPlan } from './ports.js';
import { waitForHttpOk, waitForPort, waitUntil } from './readiness.js';
import { requireTools, type Tool } from './tools.js';

const serverScript = fileURLToPath(new URL('../../cmd/server.js', import.meta.url));

export interface ClusterOptions {
  /** API processes (default 3). */
  apis?: number;
  /** The port layout's base (ports.ts; default 9080); 0: free ephemeral ports. */
  basePort?: number;
  /** Where the store file, the HAProxy config and its socket go; default: a new temporary directory. */
  dataDir?: string;
  /** Keep the data directory at stop (a given `dataDir` is always kept). */
  keepData?: boolean;
  /** LOCUS_STORE of every API process; default `sqlite:<dataDir>/cluster.db`. */
  store?: string;
  /** LOCUS_ADMIN_TOKEN of every API process; default: a random one. */
  adminToken?: string;
  /** More environment for the API processes (LOCUS_JWT_SECRET, limits, …). */
  apiEnv?: Record<string, string>;
  /** Receives every output line of every process; default: dropped (the last lines show in errors). */
  onLine?: LineSink;
  /** The tools' paths; default: found by tools.ts (an error names the install script when missing). */
  tools?: Record<Tool, string>;
  /** HAProxy's health check interval (default 1000 ms; a process is down after two failed checks). */
  checkIntervalMs?: number;
  /** How long each process may take to become ready (default 30 s). */
  startTimeoutMs?: number;
}

/** One API process of the cluster, reachable on its own ports (not through the balancer). */
export interface ApiNode {
  /** `api-1`, `api-2`, …: its name in logs and in HAProxy. */
  readonly name: string;
  readonly httpUrl: string;
  readonly httpPort: number;
  readonly tcpPort: number;
  readonly process: ManagedProcess;
  /** Starts it again (after a kill) and resolves once its /readyz answers 200. */
  start(): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
}

export interface NatsNode {
  readonly url: string;
  readonly port: number;
  readonly process: ManagedProcess;
  /** Starts it again (after a kill) on the same port and resolves once it accepts connections. */
  start(): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
}

export interface Cluster {
  /** Through HAProxy: HTTP (REST, /v1/http) and WebSocket. */
  readonly httpUrl: string;
  /** Through HAProxy: the v1 TCP protocol. */
  readonly tcpPort: number;
  /** HAProxy's statistics page. */
  readonly statsUrl: string;
  readonly host: string;
  readonly adminToken: string;
  readonly store: string;
  readonly dataDir: string;
  readonly ports: PortPlan;
  readonly nats: NatsNode;
  readonly apis: readonly ApiNode[];
  readonly haproxy: ManagedProcess;
  /** The state HAProxy gives each API process on each backend (`api_http`, `api_tcp`). */
  serverStates(): Promise<ServerState[]>;
  /** Waits until HAProxy gives `server` this state (`UP`, `DOWN`) on both backends. */
  waitForServer(server: string, status: 'UP' | 'DOWN', timeoutMs?: number): Promise<void>;
  /** Stops everything (HAProxy, API processes, nats-server) and removes a temporary data directory; safe to call twice. */
  stop(): Promise<void>;
}

export const defaultApis = 3;

/** Environment for a child: this process's, without what node:test gives its own children. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

function askHaproxy(socketPath: string, command: string): Promise<string> {
  return new Promise((resolveAnswer, reject) => {
    const socket = connect({ path: socketPath });
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(2000, () => socket.destroy(new Error(`HAProxy did not answer "${command}" within 2 s`)));
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.once('error', reject);
    socket.once('close', () => resolveAnswer(answer));
    socket.once('connect', () => socket.end(`${command}\n`));
  });
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const host = '127.0.0.1';
  const apis = options.apis ?? defaultApis;
  const basePort = options.basePort ?? defaultBasePort;
  const ports = basePort === 0 ? await freePortPlan(apis, host) : portPlan(basePort, apis);
  const tools = options.tools ?? requireTools();
  const ownDir = options.dataDir === undefined;
  const dataDir = ownDir ? mkdtempSync(join(tmpdir(), 'locus-cluster-')) : resolve(options.dataDir as string);
  mkdirSync(dataDir, { recursive: true });
  const store = options.store ?? `sqlite:${join(dataDir, 'cluster.db')}`;
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const sink: LineSink = options.onLine ?? (() => undefined);
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const natsUrl = `nats://${host}:${ports.natsPort}`;

  const natsProcess = new ManagedProcess(
    {
      name: 'nats',
      command: tools['nats-server'],
      args: ['-a', host, '-p', String(ports.natsPort), '-n', 'locus-cluster'],
      env: childEnv({}),
    },
    sink,
  );
  const nats: NatsNode = {
    url: natsUrl,
    port: ports.natsPort,
    process: natsProcess,
    async start() {
      natsProcess.start();
      await waitForPort(host, ports.natsPort, natsProcess, timeoutMs);
    },
    kill: (signal) => natsProcess.kill(signal),
  };

  const apiNodes: ApiNode[] = ports.apis.map((p, i) => {
    const name = `api-${i + 1}`;
    const httpUrl = `http://${host}:${p.httpPort}`;
    const proc = new ManagedProcess(
      {
        name,
        command: process.execPath,
        args: [...SERVER_NODE_OPTIONS, serverScript],
        env: childEnv({
          LOCUS_HOST: host,
          LOCUS_HTTP_PORT: String(p.httpPort),
          LOCUS_TCP_PORT: String(p.tcpPort),
          LOCUS_STORE: store,
          LOCUS_BUS: natsUrl,
          LOCUS_ADMIN_TOKEN: adminToken,
          LOCUS_DEMO_REALM: 'false',
          ...options.apiEnv,
        }),
      },
      sink,
    );
    return {
      name,
      httpUrl,
      httpPort: p.httpPort,
      tcpPort: p.tcpPort,
      process: proc,
      async start() {
        proc.start();
        await waitForHttpOk(`${httpUrl}/readyz`, proc, timeoutMs);
      },
      kill: (signal) => proc.kill(signal),
    };
  });

  const statsSocket = join(dataDir, 'haproxy.sock');
  const configPath = join(dataDir, 'haproxy.cfg');
  writeFileSync(
    configPath,
    haproxyConfig({
      httpPort: ports.httpPort,
      tcpPort: ports.tcpPort,
      statsPort: ports.statsPort,
      statsSocket,
      bindHost: host,
      backends: apiNodes.map((a) => ({ name: a.name, host, httpPort: a.httpPort, tcpPort: a.tcpPort })),
      checkIntervalMs: options.checkIntervalMs ?? 1000,
    }),
  );
  const haproxy = new ManagedProcess({ name: 'haproxy', command: tools.haproxy, args: ['-f', configPath, '-db'], env: childEnv({}) }, sink);

  const all = [haproxy, ...apiNodes.map((a) => a.process), natsProcess];
  // A test runner or launcher that ends without stop() must not leave the processes behind.
  const killAll = (): void => all.forEach((p) => p.killNow());
  process.once('exit', killAll);

  let stopped = false;
  const serverStates = async (): Promise<ServerState[]> => parseShowStat(await askHaproxy(statsSocket, 'show stat'));
  const cluster: Cluster = {
    httpUrl: `http://${host}:${ports.httpPort}`,
    tcpPort: ports.tcpPort,
    statsUrl: `http://${host}:${ports.statsPort}/`,
    host,
    adminToken,
    store,
    dataDir,
    ports,
    nats,
    apis: apiNodes,
    haproxy,
    serverStates,
    async waitForServer(server, status, waitMs = 10_000) {
      await waitUntil(
        async () => {
          const states = (await serverStates().catch(() => [])).filter((s) => s.server === server);
          return states.length === 2 && states.every((s) => s.status === status || s.status.startsWith(`${status} `));
        },
        haproxy,
        `HAProxy to see ${server} ${status}`,
        waitMs,
      );
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await haproxy.stop();
      await Promise.all(apiNodes.map((a) => a.process.stop(15_000)));
      await natsProcess.stop();
      process.off('exit', killAll);
      if (ownDir && options.keepData !== true) rmSync(dataDir, { recursive: true, force: true });
    },
  };

  try {
    await nats.start();
    const [first, ...rest] = apiNodes;
    await first?.start();
    await Promise.all(rest.map((a) => a.start()));
    haproxy.start();
    await waitForPort(host, ports.httpPort, haproxy, timeoutMs);
    await Promise.all(apiNodes.map((a) => cluster.waitForServer(a.name, 'UP', timeoutMs)));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
