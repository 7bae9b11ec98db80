/**
 * `npm run bench`: cluster mode (issue #21). A real cluster on this machine (internal/cluster:
 * nats-server, three API processes on one store, HAProxy in front), clients in the bench
 * process, loopback only. Prints a markdown section on stdout; progress goes to stderr.
 *
 * 1. Cross-process event latency through NATS: a writer on process A sends blk of 100 at a
 *    fixed pace of 10,000 updates/s for 5 s over TCP (after 1 s not counted); the send time
 *    travels as the fix's altitude; one WebSocket and one TCP subscriber to the whole realm on
 *    process B time each loc event on arrival. Target p99 ≤ 10 ms (as on one process).
 * 2. Ingest through the balancer: six TCP connections to HAProxy (least connections: two per
 *    process), each sending blk of 1,000 of its own objects with 2 in flight; acknowledged
 *    updates per second over 4 s (after 0.5 s), median of 3 runs. No target.
 *
 * Both on the shared SQLite file, and again on MongoDB when LOCUS_TEST_MONGODB_URI is set
 * (a database of its own, dropped afterwards; test/support/cluster.ts mongoTestStore); without it
 * the section says so.
 * The realm has the same 100 areas as the single-process bench, so every update runs the
 * geofence test.
 */
import type { Cluster } from '../../internal/cluster/cluster.js';
import { benchAreas, benchObjectCount as objectCount, random } from '../support/bench-areas.js';
import { now } from '../support/bench-clock.js';
import { eventLatency, latencyBatch, latencyMs, latencySummary, latencyWarmupMs, type Latency } from '../support/bench-event-latency.js';
import { fmt, median, ms, percentile } from '../support/bench-stats.js';
import { clusterOutput, mongoTestStore, startTestCluster } from '../support/cluster.js';
import { connectTcp, type V1Client } from '../support/v1-clients.js';
import { benchRealm } from '../support/bench-http.js';
import { sendWindowed } from '../support/bench-window.js';

const realm = 'bench';
const latencyRate = 10_000;
const ingestConnections = 6;
const ingestBatch = 1000;
const ingestWindow = 2;
const ingestMs = 4000;
const ingestWarmupMs = 500;
const ingestRuns = 3;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/** The realm, a write token and the 100 areas, made through the balancer. */
async function prepare(cluster: Cluster): Promise<string> {
  return benchRealm(cluster.httpUrl, cluster.adminToken, realm, benchAreas());
}

/** Writer on process A, subscribers on process B. */
async function crossProcessLatency(cluster: Cluster, token: string): Promise<Latency> {
  const [a, b] = cluster.apis;
  if (a === undefined || b === undefined) throw new Error('the latency part needs two API processes');
  return eventLatency({
    realm,
    token,
    subscribeTo: b,
    writeToPort: a.tcpPort,
    rate: latencyRate,
    objectCount,
    drainMs: 30_000,
    announce: `writing ${fmt(latencyRate)} updates/s on ${a.name} for ${(latencyWarmupMs + latencyMs) / 1000} s, subscribers on ${b.name}`,
  });
}

/** Pre-encoded blk messages of connection `c`: its own slice of the objects, moved somewhere else each time. */
function ingestMessages(c: number, count: number): string[] {
  const rnd = random(1000 + c);
  const slice = Math.floor(objectCount / ingestConnections);
  return Array.from({ length: count }, (_m, m) => {
    const objects = Array.from({ length: ingestBatch }, (_v, i) => ({
      id: `ingest-${c}-${i % slice}`,
      location: { longitude: 5 + rnd() * 10, latitude: 45 + rnd() * 10 },
    }));
    return JSON.stringify([{ typ: 'obj', act: 'blk', rea: realm, cid: `blk-${c}-${m}`, dat: { objects } }]);
  });
}

/** Acknowledged updates per second over every connection through HAProxy's TCP port. */
async function ingestThroughBalancer(clients: V1Client[], messages: string[][]): Promise<number> {
  const started = now();
  const countFrom = started + ingestWarmupMs;
  const stopAt = countFrom + ingestMs;
  let counted = 0;
  await Promise.all(
    clients.map((client, c) =>
      sendWindowed(client, messages[c] as string[], {
        window: ingestWindow,
        stopAt,
        action: 'blk',
        onReply: (t) => {
          if (t >= countFrom && t <= stopAt) counted += ingestBatch;
        },
      }),
    ),
  );
  return counted / (ingestMs / 1000);
}

interface Figures {
  latency: Latency;
  ingestRuns: number[];
}

async function measure(cluster: Cluster): Promise<Figures> {
  const token = await prepare(cluster);
  log('created the realm and 100 areas');
  const latency = await crossProcessLatency(cluster, token);
  log(`  WebSocket ${latencySummary(latency.ws)}; TCP ${latencySummary(latency.tcp)} (${latency.ws.length}/${latency.tcp.length} of ${latency.updates})`);
  const clients = await Promise.all(Array.from({ length: ingestConnections }, () => connectTcp(cluster.tcpPort, token)));
  const messages = clients.map((_c, c) => ingestMessages(c, 20));
  const runs: number[] = [];
  for (let run = 1; run <= ingestRuns; run++) {
    log(`ingest through the balancer, run ${run}`);
    runs.push(await ingestThroughBalancer(clients, messages));
    log(`  ${fmt(runs[runs.length - 1] as number)} updates/s`);
  }
  await Promise.all(clients.map((c) => c.close()));
  return { latency, ingestRuns: runs };
}

async function withCluster(store: string | undefined, label: string): Promise<Figures> {
  log(`starting a cluster on ${label}`);
  const cluster = await startTestCluster({
    ...(store === undefined ? {} : { store }),
    checkIntervalMs: 1000,
    apiEnv: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000' },
  });
  try {
    return await measure(cluster);
  } catch (err) {
    log(clusterOutput(cluster));
    throw err;
  } finally {
    await cluster.stop();
  }
}

function rows(figures: Figures, store: string): string[][] {
  const lat = figures.latency;
  const out = (['ws', 'tcp'] as const).map((name) => {
    const s = lat[name];
    const p99 = percentile(s, 99);
    const met = p99 <= 10 && s.length === lat.updates;
    return [
      `${store}: event latency write on process A → ${name === 'ws' ? 'WebSocket' : 'TCP'} subscriber on process B, through NATS, at ${fmt(latencyRate)} updates/s, p50 / p99 (${fmt(s.length)} of ${fmt(lat.updates)} loc events)`,
      `${ms(percentile(s, 50))} / ${ms(p99)}`,
      'p99 ≤ 10 ms',
      met ? 'yes' : 'no',
    ];
  });
  out.push([
    `${store}: location updates/s through the balancer, three processes on one store (${ingestConnections} TCP connections, blk of ${fmt(ingestBatch)}, ${ingestWindow} in flight each; median of ${ingestRuns} runs, runs ${figures.ingestRuns.map(fmt).join(' / ')})`,
    fmt(median(figures.ingestRuns)),
    '–',
    '–',
  ]);
  return out;
}

async function main(): Promise<void> {
  const table: string[][] = rows(await withCluster(undefined, 'one SQLite file'), 'SQLite');
  const mongoUri = process.env.LOCUS_TEST_MONGODB_URI;
  let mongoNote = '';
  if (mongoUri === undefined || mongoUri === '') {
    mongoNote = 'MongoDB: not measured (LOCUS_TEST_MONGODB_URI is not set).';
    log(mongoNote);
  } else {
    const store = mongoTestStore(mongoUri);
    try {
      table.push(...rows(await withCluster(store.url ?? undefined, `MongoDB (${String(store.url).replace(/\/\/[^@]*@/, '//***@')})`), 'MongoDB'));
    } finally {
      await store.cleanup();
    }
  }
  const out = [
    '## Cluster mode (`test/bench/cluster.bench.ts`)',
    '',
    'A cluster on this machine (`npm run cluster`\'s launcher): nats-server, three API processes',
    '(`dist/cmd/server.js`) on one store, HAProxy in front; clients in the bench process, loopback',
    'only; the realm has the 100 areas of the single-process bench. Latency: a writer on process A',
    `sends blk of ${latencyBatch} at a fixed pace for ${latencyMs / 1000} s over TCP (after ${latencyWarmupMs / 1000} s not counted); one WebSocket and one TCP`,
    'subscriber on process B; the send time travels as the fix altitude (same clock). Ingest: TCP',
    'connections to HAProxy, which spreads them over the processes by least connections; each',
    'connection writes its own objects. Every process, nats-server and HAProxy share the same cores',
    'as the clients.',
    '',
    '| Measure | Result | Target | Met |',
    '|---|---|---|---|',
    ...table.map(([what, result, target, met]) => `| ${String(what)} | ${String(result)} | ${String(target)} | ${String(met)} |`),
    ...(mongoNote === '' ? [] : ['', mongoNote]),
  ];
  process.stdout.write(out.join('\n') + '\n');
}

await main();
