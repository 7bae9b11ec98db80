/**
 * `npm run bench`: what observability costs. Servers as `npm start` runs them (child
 * processes, SQLite files in temp dirs, loopback), the same in all but one setting:
 * metrics off (LOCUS_METRICS=false), metrics on (the default), and metrics on with tracing on
 * (OTEL_TRACES_EXPORTER=otlp, every request sampled, spans sent over OTLP/HTTP to a sink in
 * this process that answers at once). Each realm has the 100 areas of the protocol bench.
 *
 * Two workloads, run in rounds; each round starts a fresh server per setting, in turn (a slow
 * spell of the host then falls on all of them, and no process keeps an advantage of its own), the
 * median round reported:
 * 1. ingest: `obj`/`blk` of 1,000 location updates over one TCP connection, 4 in flight;
 * 2. query: REST lists of the objects in a 50 km circle (about 100 of 10,000), 8 requests in
 *    flight over keep-alive connections.
 * With each, the server's CPU time per update or request (steadier than a rate on a shared
 * host). Target (issue #22): with metrics on and tracing off, both throughputs within 3% of
 * metrics off. The cost of tracing on is stated, without a target. A comparison of two
 * settings is the median of their per-round ratios: the servers of one round run back to back,
 * so a slow spell of the host that spans a round moves both sides of its ratio alike, where
 * it would move only one setting's median of rates.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchAreas, benchObjectCount as objectCount, random } from '../support/bench-areas.js';
import { now } from '../support/bench-clock.js';
import { benchAdminToken as adminToken, startBenchServer, stopBenchServer, type BenchServer } from '../support/bench-server.js';
import { fmt, median, processUse, usePerOperation } from '../support/bench-stats.js';
import { connectTcp, type V1Client } from '../support/v1-clients.js';
import { benchRealm } from '../support/bench-http.js';
import { windowedThroughput } from '../support/bench-window.js';

const realm = 'bench';
const batchSize = 1000;
const window = 4;
const queryConcurrency = 8;
const rounds = Number(process.env.LOCUS_BENCH_ROUNDS ?? 7);
const runMs = 3000;
const warmupMs = 500;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

interface Setup {
  name: string;
  env: Record<string, string>;
}

interface Run {
  rate: number;
  cpuUs: number;
}

interface Subject {
  setup: Setup;
  server: BenchServer;
  token: string;
  client: V1Client;
}

/** An OTLP/HTTP endpoint that takes every export and answers 200 at once (counting what it got). */
async function startSpanSink(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const sink: HttpServer = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const { port } = sink.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    bytes: () => bytes,
    close: () => new Promise((resolve) => sink.close(() => resolve())),
  };
}

/** Pre-encoded blk messages, each moving a slice of consecutive objects somewhere else in the region. */
function batches(count: number, seed: number): string[] {
  const rnd = random(seed);
  return Array.from({ length: count }, (_, b) => {
    const objects = Array.from({ length: batchSize }, (_v, i) => ({
      id: `obj-${(b * batchSize + i) % objectCount}`,
      location: { longitude: 5 + rnd() * 10, latitude: 45 + rnd() * 10 },
    }));
    return JSON.stringify([{ typ: 'obj', act: 'blk', rea: realm, cid: `blk-${b}`, dat: { objects } }]);
  });
}

/** Sends blk messages with `window` in flight for warmupMs + runMs; updates/s and CPU per update over the counted part. */
async function ingest(subject: Subject, messages: string[]): Promise<Run> {
  const { client, server } = subject;
  const { rate, cpuUs } = await windowedThroughput(client, messages, { window, warmupMs, runMs, updatesPerFrame: batchSize, pid: server.child.pid, action: 'blk' });
  return { rate, cpuUs };
}

/** `queryConcurrency` loops of REST circle lists for warmupMs + runMs; requests/s and CPU per request. */
async function query(subject: Subject, seed: number): Promise<Run> {
  const { server, token } = subject;
  const rnd = random(seed);
  const started = now();
  const countFrom = started + warmupMs;
  const stopAt = countFrom + runMs;
  let counted = 0;
  let use = null as ReturnType<typeof processUse>;
  const loop = async (): Promise<void> => {
    while (now() < stopAt) {
      const shape = JSON.stringify({ cx: 5 + rnd() * 10, cy: 45 + rnd() * 10, r: 50_000 });
      const res = await fetch(`${server.httpUrl}/v2/realm/${realm}/object?limit=1000&shape=${encodeURIComponent(shape)}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (res.status !== 200) throw new Error(`list failed: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      if (now() >= countFrom && now() < stopAt) counted++;
    }
  };
  const timer = setTimeout(() => {
    use = processUse(server.child.pid);
  }, warmupMs);
  await Promise.all(Array.from({ length: queryConcurrency }, loop));
  clearTimeout(timer);
  const end = processUse(server.child.pid);
  return { rate: counted / (runMs / 1000), cpuUs: usePerOperation(use, end, counted).cpuUs };
}

async function prepare(setup: Setup): Promise<Subject> {
  const server = await startBenchServer({ adminToken, env: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000', ...setup.env } });
  const token = await benchRealm(server.httpUrl, adminToken, realm, benchAreas());
  const client = await connectTcp(server.tcpPort, token);
  return { setup, server, token, client };
}

interface Figures {
  ingest: number;
  ingestCpu: number;
  query: number;
  queryCpu: number;
}

const figures = (s: { ingest: readonly Run[]; query: readonly Run[] }): Figures => ({
  ingest: median(s.ingest.map((r) => r.rate)),
  ingestCpu: median(s.ingest.map((r) => r.cpuUs)),
  query: median(s.query.map((r) => r.rate)),
  queryCpu: median(s.query.map((r) => r.cpuUs)),
});

const pct = (value: number, base: number): string => `${value >= base ? '+' : ''}${((100 * (value - base)) / base).toFixed(1)}%`;
const pctOf = (ratio: number): string => pct(ratio, 1);

/** The median over the rounds of `of(a[round]) / of(b[round])`. */
const pairedRatio = (a: readonly Run[], b: readonly Run[], of: (run: Run) => number): number =>
  median(a.map((run, round) => of(run) / of(b[round] as Run)));

async function main(): Promise<void> {
  const sink = await startSpanSink();
  const setups: Setup[] = [
    { name: 'metrics off', env: { LOCUS_METRICS: 'false', OTEL_TRACES_EXPORTER: 'none' } },
    { name: 'metrics on, tracing off', env: { LOCUS_METRICS: 'true', OTEL_TRACES_EXPORTER: 'none' } },
    {
      name: 'metrics on, tracing on',
      env: {
        LOCUS_METRICS: 'true',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.url,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'locus-bench',
        OTEL_TRACES_SAMPLER: 'always_on',
      },
    },
  ];
  const runs = new Map<string, { ingest: Run[]; query: Run[] }>(setups.map((setup) => [setup.name, { ingest: [], query: [] }]));
  const messages = batches(40, 1);
  try {
    for (let round = 1; round <= rounds; round++) {
      // Each round starts fresh servers (no process keeps an advantage of its own: heap layout,
      // compiled code, file placement), a different one first each round.
      const order = setups.map((_s, i) => setups[(i + round) % setups.length] as Setup);
      for (const setup of order) {
        const subject = await prepare(setup);
        try {
          // Every object exists (and has a location) before the counted runs.
          await ingest(subject, messages);
          const i = await ingest(subject, messages);
          const q = await query(subject, round * 10 + setups.indexOf(setup));
          runs.get(setup.name)?.ingest.push(i);
          runs.get(setup.name)?.query.push(q);
          log(`round ${round}, ${setup.name}: ${fmt(i.rate)} updates/s (${i.cpuUs.toFixed(1)} µs), ${fmt(q.rate)} lists/s (${q.cpuUs.toFixed(0)} µs)`);
        } finally {
          await subject.client.close();
          await stopBenchServer(subject.server);
        }
      }
    }
  } finally {
    await sink.close();
  }
  const measured = setups.map((setup) => runs.get(setup.name) ?? { ingest: [], query: [] });
  const [off, on, traced] = measured.map(figures) as [Figures, Figures, Figures];
  const [offRuns, onRuns, tracedRuns] = measured as [(typeof measured)[0], (typeof measured)[0], (typeof measured)[0]];
  const rate = (run: Run): number => run.rate;
  const ratio = {
    onIngest: pairedRatio(onRuns.ingest, offRuns.ingest, rate),
    onQuery: pairedRatio(onRuns.query, offRuns.query, rate),
    tracedIngest: pairedRatio(tracedRuns.ingest, onRuns.ingest, rate),
    tracedQuery: pairedRatio(tracedRuns.query, onRuns.query, rate),
  };
  const perRound = (a: readonly Run[], b: readonly Run[]): string => a.map((run, round) => pct(run.rate, (b[round] as Run).rate)).join(', ');
  const within = (r: number): boolean => r >= 0.97;
  const row = (name: string, f: Figures, base: Figures | null): string =>
    `| ${name} | ${fmt(f.ingest)}${base === null ? '' : ` (${pct(f.ingest, base.ingest)})`} | ${(f.ingestCpu).toFixed(1)} | ` +
    `${fmt(f.query)}${base === null ? '' : ` (${pct(f.query, base.query)})`} | ${(f.queryCpu).toFixed(0)} |`;
  const ingestMet = within(ratio.onIngest);
  const queryMet = within(ratio.onQuery);
  const out = [
    '## Observability cost (`test/bench/observability.bench.ts`)',
    '',
    'Servers (child processes, SQLite, 100 areas), alike but for metrics and tracing. Ingest: blk of 1,000',
    `location updates over one TCP connection, ${window} in flight. Query: REST lists of a 50 km circle (about 100 of`,
    `${fmt(objectCount)} objects), ${queryConcurrency} in flight. ${rounds} rounds; in each, a fresh server per setting (a different setting first`,
    `each round) runs ${runMs / 1000} s of each workload after a warm-up; the table gives the medians of the rounds, the comparisons`,
    'below the median of the per-round ratios (the servers of a round run back to back). Tracing on samples every request and sends the spans over OTLP/HTTP',
    `(protobuf) to a sink in the bench process (${fmt(sink.bytes())} bytes received).`,
    '',
    '| Setting | Ingest, updates/s | server µs CPU per update | Query, lists/s | server µs CPU per list |',
    '|---|---|---|---|---|',
    row('metrics off', off, null),
    row('metrics on, tracing off', on, off),
    row('metrics on, tracing on', traced, off),
    '',
    '| Measure | Result | Target | Met |',
    '|---|---|---|---|',
    `| Ingest throughput, metrics on and tracing off, against metrics off | ${pctOf(ratio.onIngest)} | within 3% | ${ingestMet ? 'yes' : 'no'} |`,
    `| Query throughput, metrics on and tracing off, against metrics off | ${pctOf(ratio.onQuery)} | within 3% | ${queryMet ? 'yes' : 'no'} |`,
    `| Cost of tracing on (every request sampled), ingest / query throughput against metrics on | ${pctOf(ratio.tracedIngest)} / ${pctOf(ratio.tracedQuery)} | – | – |`,
    '',
    `Per round, metrics on against off: ingest ${perRound(onRuns.ingest, offRuns.ingest)}; query ${perRound(onRuns.query, offRuns.query)}.`,
  ];
  process.stdout.write(out.join('\n') + '\n');
}

await main();
