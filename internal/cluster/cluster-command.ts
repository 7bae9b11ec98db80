/**
 * `npm run cluster`: starts a cluster, prints where to reach it and its admin token, echoes
 * every process's log lines prefixed with the process's name, and stops everything on
 * SIGINT (Ctrl-C) or SIGTERM. A second signal kills the processes at once.
 */
import { ClusterArgsError, clusterUsage, parseClusterArgs, type ClusterArgs } from './cluster-args.js';
import { startCluster, type Cluster } from './cluster.js';
import { ensureTools, MissingToolError, requireTools } from './tools.js';

function banner(cluster: Cluster): string {
  const pad = (label: string): string => `  ${label.padEnd(20)}`;
  return [
    '',
    `locus cluster: ${cluster.apis.length} API processes behind HAProxy, coordinating through NATS`,
    `${pad('HTTP and WebSocket')}${cluster.httpUrl}   (WebSocket: ${cluster.httpUrl.replace(/^http/, 'ws')}/ws)`,
    `${pad('v1 TCP')}${cluster.host}:${cluster.tcpPort}`,
    `${pad('HAProxy statistics')}${cluster.statsUrl}`,
    `${pad('NATS')}${cluster.nats.url}`,
    ...cluster.apis.map((a) => `${pad(a.name)}${a.httpUrl}   TCP ${cluster.host}:${a.tcpPort}`),
    `${pad('store')}${cluster.store.replace(/\/\/[^@]*@/, '//***@')}`,
    `${pad('data directory')}${cluster.dataDir}`,
    `${pad('admin token')}${cluster.adminToken}`,
    '',
    'Try:',
    `  curl -X PUT -H 'Authorization: Bearer ${cluster.adminToken}' ${cluster.httpUrl}/admin/v1/realm/demo`,
    `  curl -X POST -H 'Authorization: Bearer ${cluster.adminToken}' -H 'Content-Type: application/json' \\`,
    `    -d '{"scope":"write"}' ${cluster.httpUrl}/admin/v1/realm/demo/token`,
    '',
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}

export async function runClusterCommand(argv: readonly string[]): Promise<number> {
  let args: ClusterArgs;
  try {
    args = parseClusterArgs(argv, process.env);
  } catch (err) {
    if (!(err instanceof ClusterArgsError)) throw err;
    process.stderr.write(`locus cluster: ${err.message}\n\n${clusterUsage}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(clusterUsage);
    return 0;
  }
  let tools;
  try {
    tools = args.install ? ensureTools() : requireTools();
  } catch (err) {
    if (!(err instanceof MissingToolError)) throw err;
    process.stderr.write(`locus cluster: ${err.message}\n`);
    return 1;
  }
  const width = `api-${args.apis}`.length;
  const starting = startCluster({
    apis: args.apis,
    basePort: args.basePort,
    ...(args.dataDir === null ? {} : { dataDir: args.dataDir }),
    ...(args.store === null ? {} : { store: args.store }),
    keepData: args.keepData,
    tools,
    onLine: args.quiet ? undefined : (name, line) => process.stdout.write(`${name.padEnd(width)} | ${line}\n`),
  });
  let stopping: Promise<void> | null = null;
  const stopped = new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping !== null) {
        process.stderr.write(`locus cluster: ${signal} again; killing every process\n`);
        process.exit(1); // the exit handler of startCluster kills the children
      }
      process.stderr.write(`locus cluster: ${signal}; stopping HAProxy, the API processes and nats-server\n`);
      stopping = starting.then(
        (cluster) => cluster.stop(),
        () => undefined,
      );
      void stopping.then(() => resolve(0));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  let cluster: Cluster;
  try {
    cluster = await starting;
  } catch (err) {
    process.stderr.write(`locus cluster: start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  if (stopping === null) process.stderr.write(banner(cluster));
  for (const proc of [cluster.haproxy, cluster.nats.process, ...cluster.apis.map((a) => a.process)]) {
    void proc.exited.then((exit) => {
      if (stopping === null) {
        process.stderr.write(`locus cluster: ${proc.name} ended (${exit.code === null ? String(exit.signal) : `code ${exit.code}`}) while the cluster runs\n`);
      }
    });
  }
  const code = await stopped;
  process.stderr.write('locus cluster: stopped\n');
  return code;
}
