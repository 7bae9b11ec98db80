/**
 * A real cluster for tests and benches: nats-server, API processes on one shared SQLite file
 * (or LOCUS_TEST_MONGODB_URI's database when asked), HAProxy in front (internal/cluster).
 * The API processes accept the conformance JWT secret, so `signToken` tokens work on every one.
 */
import { startCluster, type Cluster, type ClusterOptions } from '../../internal/cluster/cluster.js';
import { adminToken } from './harness.js';
import { testSecret } from './hivekit-wire.js';

export type { Cluster };

export interface TestClusterOptions extends ClusterOptions {
  /** Echo every process's output lines to stderr (LOCUS_TEST_CLUSTER_LOGS=1 does too). */
  echo?: boolean;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<Cluster> {
  const echo = options.echo ?? process.env.LOCUS_TEST_CLUSTER_LOGS === '1';
  return startCluster({
    basePort: 0,
    adminToken,
    checkIntervalMs: 250,
    onLine: echo ? (name, line) => process.stderr.write(`${name} | ${line}\n`) : undefined,
    ...options,
    apiEnv: { LOCUS_JWT_SECRET: testSecret, LOCUS_LOG_LEVEL: 'warn', ...options.apiEnv },
  });
}

/** The last output lines of every process of the cluster, for a failed test's message. */
export function clusterOutput(cluster: Cluster): string {
  return [cluster.nats.process, ...cluster.apis.map((a) => a.process), cluster.haproxy]
    .map((p) => `---- ${p.name}\n${p.recentOutput()}`)
    .join('\n');
}

/** Polls `read` until `ok` holds for its value; returns the value, or throws with the last one after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
