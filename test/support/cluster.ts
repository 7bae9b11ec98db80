/**
 * A real cluster for tests and benches: nats-server, API processes on one shared SQLite file
 * (or LOCUS_TEST_MONGODB_URI's database when asked), HAProxy in front (internal/cluster).
 * The API processes accept the conformance JWT secret, so `signToken` tokens work on every one.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { startCluster, type Cluster, type ClusterOptions } from '../../internal/cluster/cluster.js';
import { adminToken } from './harness.js';
import { testSecret } from './hivekit-wire.js';
import { clusterLogSink } from './test-logs.js';

export type { Cluster };

export interface TestClusterOptions extends ClusterOptions {
  /** Echo every process's output lines to stderr (LOCUS_TEST_CLUSTER_LOGS=1 does too). */
  echo?: boolean;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<Cluster> {
  const echo = options.echo ?? process.env.LOCUS_TEST_CLUSTER_LOGS === '1';
  // Every line of every process goes to the run's log directory too (test-logs.ts), at info.
  const logged = clusterLogSink();
  const onLine = echo || logged !== undefined
    ? (name: string, line: string) => {
        logged?.(name, line);
        if (echo) process.stderr.write(`${name} | ${line}\n`);
      }
    : undefined;
  return startCluster({
    basePort: 0,
    adminToken,
    checkIntervalMs: 250,
    onLine,
    ...options,
    apiEnv: { LOCUS_JWT_SECRET: testSecret, LOCUS_LOG_LEVEL: logged === undefined ? 'warn' : 'info', ...options.apiEnv },
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

/** A store for a test cluster: its LOCUS_STORE (null: the launcher's SQLite file) and what removes it afterwards. */
export interface TestStore {
  url: string | null;
  cleanup(): Promise<void>;
}

/**
 * A MongoDB store of its own on the server of `uri` (LOCUS_TEST_MONGODB_URI): the URL with a
 * fresh control database as its path; cleanup drops that database and every realm database
 * named from it.
 */
export function mongoTestStore(uri: string): TestStore {
  const control = `locus_cluster_${randomBytes(4).toString('hex')}`;
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]+)\/?([^?]*)(\?.*)?$/.exec(uri);
  if (match === null) throw new Error(`LOCUS_TEST_MONGODB_URI is not a mongodb:// URL: ${uri}`);
  return {
    url: `${match[1]}/${control}${match[3] ?? ''}`,
    async cleanup() {
      const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
      try {
        const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
        for (const { name } of databases) if (name === control || name.startsWith(`${control}_`)) await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}
