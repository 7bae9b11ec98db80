/** The options of `npm run cluster` (cmd/cluster.ts): flags win over their variables. */
import { defaultApis } from './cluster.js';
import { defaultBasePort, maxApis } from './ports.js';

export interface ClusterArgs {
  apis: number;
  basePort: number;
  dataDir: string | null;
  keepData: boolean;
  store: string | null;
  install: boolean;
  quiet: boolean;
  help: boolean;
}

export const clusterUsage = `Usage: npm run cluster -- [options]

Starts nats-server, API processes sharing one store, and HAProxy in front of them; Ctrl-C stops them all.

  --apis N          API processes (LOCUS_CLUSTER_APIS; default ${defaultApis}, at most ${maxApis})
  --base-port P     first port of the layout (LOCUS_CLUSTER_BASE_PORT; default ${defaultBasePort}):
                    P HTTP/WebSocket, P+1 v1 TCP, P+2 NATS, P+3 HAProxy stats,
                    P+10+2i and P+11+2i API process i's own HTTP and TCP ports
  --data-dir DIR    store file, HAProxy config and socket (LOCUS_CLUSTER_DIR; kept at stop);
                    default: a temporary directory, removed at stop
  --keep            keep the temporary directory at stop (LOCUS_CLUSTER_KEEP=true)
  --store URL       LOCUS_STORE of every API process (LOCUS_CLUSTER_STORE), e.g. mongodb://localhost:27017;
                    default: sqlite:<data dir>/cluster.db
  --no-install      fail instead of running scripts/install-tools.sh when a tool is missing
  --quiet           do not echo the processes' log lines
  --help            this text
`;

export class ClusterArgsError extends Error {
  override readonly name = 'ClusterArgsError';
}

function integer(raw: string, source: string): number {
  if (!/^\d+$/.test(raw)) throw new ClusterArgsError(`${source} must be a whole number, got "${raw}"`);
  return Number(raw);
}

function boolean(raw: string, source: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0' || raw === '') return false;
  throw new ClusterArgsError(`${source} must be true or false, got "${raw}"`);
}

export function parseClusterArgs(argv: readonly string[], env: NodeJS.ProcessEnv): ClusterArgs {
  const args: ClusterArgs = {
    apis: env.LOCUS_CLUSTER_APIS === undefined ? defaultApis : integer(env.LOCUS_CLUSTER_APIS, 'LOCUS_CLUSTER_APIS'),
    basePort: env.LOCUS_CLUSTER_BASE_PORT === undefined ? defaultBasePort : integer(env.LOCUS_CLUSTER_BASE_PORT, 'LOCUS_CLUSTER_BASE_PORT'),
    dataDir: env.LOCUS_CLUSTER_DIR === undefined || env.LOCUS_CLUSTER_DIR === '' ? null : env.LOCUS_CLUSTER_DIR,
    keepData: env.LOCUS_CLUSTER_KEEP === undefined ? false : boolean(env.LOCUS_CLUSTER_KEEP, 'LOCUS_CLUSTER_KEEP'),
    store: env.LOCUS_CLUSTER_STORE === undefined || env.LOCUS_CLUSTER_STORE === '' ? null : env.LOCUS_CLUSTER_STORE,
    install: true,
    quiet: false,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined) throw new ClusterArgsError(`${name} needs a value`);
      i++;
      return next;
    };
    switch (name) {
      case '--apis':
        args.apis = integer(value(), name);
        break;
      case '--base-port':
        args.basePort = integer(value(), name);
        break;
      case '--data-dir':
        args.dataDir = value();
        break;
      case '--store':
        args.store = value();
        break;
      case '--keep':
        args.keepData = true;
        break;
      case '--no-install':
        args.install = false;
        break;
      case '--quiet':
        args.quiet = true;
        break;
      case '--help':
      case '-h':
        args.help = true;
        break;
      default:
        throw new ClusterArgsError(`unknown option ${arg}`);
    }
  }
  if (args.apis < 1 || args.apis > maxApis) throw new ClusterArgsError(`--apis must be 1..${maxApis}, got ${args.apis}`);
  if (args.basePort < 1 || args.basePort + 11 + 2 * (args.apis - 1) > 65535) {
    throw new ClusterArgsError(`--base-port ${args.basePort} leaves no room for ${args.apis} API processes below 65536`);
  }
  if (args.store !== null && args.store.trim() === '') throw new ClusterArgsError('--store must not be empty');
  return args;
}
