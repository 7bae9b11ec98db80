/**
 * `npm run bench`: the tail of a shape query over HTTP while the server is busy writing,
 * against the real server in a child process started as `npm start` starts it
 * (SERVER_NODE_OPTIONS; SQLite file in a temp dir, loopback only). Prints a markdown
 * section on stdout; progress goes to stderr.
 *
 * 1. Ingest: OBJECTS new objects (id, label, location, four data fields) through the REST
 *    v2 bulk endpoint (`POST /v2/realm/<r>/object`), batches of 10,000, one at a time.
 * 2. Quiet: at once after the last batch is acknowledged (the search indexer, the WAL
 *    checkpoints and the collector still catching up), QUERIES sequential circle queries
 *    (r = 1 km, `GET /v2/realm/<r>/object?shape=…`) at random places over one keep-alive
 *    connection, each timed from the request to the whole body.
 * 3. During ingest: the same, while a v1 TCP connection writes `obj blk` frames of 100
 *    location updates of existing objects every 5 ms (20,000 updates/s, paced; at most
 *    20 frames unanswered, each reply checked; the rate acknowledged is reported).
 * Targets: p99 ≤ 5 ms in 2 and 3. With each phase, the server's event-loop delay (the
 * `nodejs_eventloop_lag_*` metrics, reset by each scrape) and its garbage collections
 * (`nodejs_gc_duration_seconds`).
 *
 * The objects lie uniformly in a 100 km × 100 km square around Berlin (as in
 * query.bench.ts), so a 1 km circle holds about 63 of 200,000.
 *
 * LOCUS_BENCH_OBJECTS (200,000) and LOCUS_BENCH_QUERIES (3,000) size a run;
 * LOCUS_BENCH_SERVER_ARGS adds Node.js options to the server's command line (for example
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`); LOCUS_BENCH_SERVER_OUT names a file that gets the
 * server's output once it listens (for example with `--trace-gc`).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { now } from '../support/bench-clock.js';
import { mulberry32 } from '../support/bench-random.js';
import { benchAdminToken as adminToken, startBenchServer, stopBenchServer, type BenchServer } from '../support/bench-server.js';
import { benchRealm } from '../support/bench-http.js';
import { fmt, ms, percentile } from '../support/bench-stats.js';
import { connectTcp } from '../support/v1-clients.js';

const OBJECTS = Number(process.env.LOCUS_BENCH_OBJECTS ?? 200_000);
const QUERIES = Number(process.env.LOCUS_BENCH_QUERIES ?? 3000);
const BATCH = 10_000;
const WRITE_RATE = 20_000;
const WRITE_BATCH = 100;
/** Frames sent and not yet answered, at most. */
const WRITE_WINDOW = 20;
const TARGET_MS = 5;
const realm = 'bench';

const CENTRE_LON = 13.4;
const CENTRE_LAT = 52.5;
const HALF_LON = 50_000 / (111_320 * Math.cos((CENTRE_LAT * Math.PI) / 180));
const HALF_LAT = 50_000 / 110_574;
const KINDS = ['truck', 'van', 'car', 'bike'] as const;

const serverArgs = (process.env.LOCUS_BENCH_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== '');

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

const random = mulberry32(20_261_128);
const lonAt = (spread: number): number => CENTRE_LON + (random() * 2 - 1) * HALF_LON * spread;
const latAt = (spread: number): number => CENTRE_LAT + (random() * 2 - 1) * HALF_LAT * spread;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One HTTP request over the keep-alive connection: status and body text. */
function send(server: BenchServer, method: string, path: string, token: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.httpUrl);
    const req = request(
      {
        agent,
        method,
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The REST ingest: OBJECTS new objects in bulks of BATCH; objects per second. */
async function ingest(server: BenchServer, token: string): Promise<number> {
  const started = now();
  for (let from = 0; from < OBJECTS; from += BATCH) {
    const objects = [];
    for (let i = from; i < Math.min(OBJECTS, from + BATCH); i++) {
      const kind = KINDS[i % KINDS.length] as string;
      objects.push({
        id: `${kind}/${i}`,
        label: `${kind} ${i}`,
        location: { longitude: lonAt(1), latitude: latAt(1) },
        data: { kind, speed: Math.floor(random() * 121), fuel: Math.round(random() * 1000) / 1000, active: random() < 0.9 },
      });
    }
    const { status, text } = await send(server, 'POST', `/v2/realm/${realm}/object`, token, JSON.stringify({ objects }));
    if (status !== 200) throw new Error(`bulk write: ${status} ${text}`);
  }
  return OBJECTS / ((now() - started) / 1000);
}

interface Phase {
  /** Sorted latencies, ms. */
  latencies: number[];
  /** Objects returned per query on average. */
  returned: number;
  server: ServerFigures;
}

/** QUERIES sequential circle queries at random places; the server's figures over the same time. */
async function queries(server: BenchServer, token: string): Promise<Phase> {
  const paths = Array.from({ length: QUERIES }, () => {
    const shape = JSON.stringify({ cx: lonAt(0.9), cy: latAt(0.9), r: 1000 });
    return `/v2/realm/${realm}/object?shape=${encodeURIComponent(shape)}`;
  });
  const latencies: number[] = [];
  let returned = 0;
  const before = await serverFigures(server);
  for (const path of paths) {
    const started = now();
    const { status, text } = await send(server, 'GET', path, token);
    latencies.push(now() - started);
    if (status !== 200) throw new Error(`query: ${status} ${text}`);
    // Each entry holds its id twice (key and field); counted without parsing, to keep the bench lean.
    returned += text.split('"connectionStatus"').length - 1;
  }
  const after = await serverFigures(server);
  return { latencies: latencies.sort((a, b) => a - b), returned: returned / QUERIES, server: difference(before, after) };
}

interface ServerFigures {
  /** Event-loop delay since the last scrape, ms. */
  lagP99: number;
  lagMax: number;
  /** Garbage collections so far by kind: count and total seconds. */
  gc: Map<string, { count: number; seconds: number }>;
  /**
   * The server's main thread (/proc/<pid>/task/<pid>/schedstat, ms): time on a CPU, and
   * time runnable but waiting for one (the host's other work); NaN without /proc.
   */
  onCpuMs: number;
  waitingMs: number;
  /** When scraped (ms). */
  at: number;
}

/** The main thread's time on a CPU and waiting for one, ms (NaN without /proc). */
function schedstat(pid: number | undefined): { onCpuMs: number; waitingMs: number } {
  try {
    const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { onCpuMs: (onCpu ?? Number.NaN) / 1e6, waitingMs: (waiting ?? Number.NaN) / 1e6 };
  } catch {
    return { onCpuMs: Number.NaN, waitingMs: Number.NaN };
  }
}

/** Scrapes the server's metrics (which also resets its event-loop delay histogram). */
async function serverFigures(server: BenchServer): Promise<ServerFigures> {
  const { text } = await send(server, 'GET', '/metrics', '');
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  const gc = new Map<string, { count: number; seconds: number }>();
  for (const [, field, kind, figure] of text.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} (\S+)/gm)) {
    const entry = gc.get(kind as string) ?? { count: 0, seconds: 0 };
    if (field === 'count') entry.count = Number(figure);
    else entry.seconds = Number(figure);
    gc.set(kind as string, entry);
  }
  return { lagP99: value('nodejs_eventloop_lag_p99_seconds') * 1000, lagMax: value('nodejs_eventloop_lag_max_seconds') * 1000, gc, ...schedstat(server.child.pid), at: now() };
}

/** The event-loop figures of `after` (since `before` was scraped), and the collections in between. */
function difference(before: ServerFigures, after: ServerFigures): ServerFigures {
  const gc = new Map<string, { count: number; seconds: number }>();
  for (const [kind, entry] of after.gc) {
    const old = before.gc.get(kind) ?? { count: 0, seconds: 0 };
    if (entry.count > old.count) gc.set(kind, { count: entry.count - old.count, seconds: entry.seconds - old.seconds });
  }
  return {
    lagP99: after.lagP99,
    lagMax: after.lagMax,
    gc,
    onCpuMs: after.onCpuMs - before.onCpuMs,
    waitingMs: after.waitingMs - before.waitingMs,
    at: after.at - before.at,
  };
}

/** The main thread's share of the phase on a CPU and waiting for one. */
function threadLine(figures: ServerFigures): string {
  if (!Number.isFinite(figures.onCpuMs)) return '';
  const share = (value: number): string => `${((100 * value) / figures.at).toFixed(0)}%`;
  return `; main thread on a CPU ${share(figures.onCpuMs)} of the phase, runnable and waiting for one ${share(figures.waitingMs)}`;
}

/** The queries while a v1 TCP connection writes WRITE_RATE location updates per second; and the updates acknowledged per second. */
async function queriesDuringIngest(server: BenchServer, token: string): Promise<Phase & { writeRate: number }> {
  // Pre-encoded, so that the bench's own work between queries stays small.
  const frames = Array.from({ length: Math.ceil(OBJECTS / WRITE_BATCH) }, (_f, k) => {
    const objects = Array.from({ length: WRITE_BATCH }, (_v, i) => {
      const n = (k * WRITE_BATCH + i) % OBJECTS;
      return { id: `${KINDS[n % KINDS.length] as string}/${n}`, location: { longitude: lonAt(1), latitude: latAt(1) } };
    });
    return JSON.stringify([{ typ: 'obj', act: 'blk', rea: realm, cid: `w${k}`, dat: { objects } }]);
  });
  const writer = await connectTcp(server.tcpPort, token);
  let stop = false;
  let sent = 0;
  const interval = (1000 * WRITE_BATCH) / WRITE_RATE;
  const started = now();
  let acknowledged = 0;
  let answered: () => void = () => undefined;
  const writing = (async () => {
    let due = started;
    for (let k = 0; !stop; k++) {
      const wait = due - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      // A server that falls behind is not sent more than WRITE_WINDOW frames ahead; the
      // pace then starts again from the reply (no burst to catch up): the rate is reported.
      if (sent - acknowledged >= WRITE_WINDOW) {
        await new Promise<void>((resolve) => {
          answered = resolve;
        });
        due = now();
      }
      if (stop) break;
      writer.sendText(frames[k % frames.length] as string);
      sent++;
      due += interval;
    }
  })();
  const replies = (async () => {
    try {
      while (!stop || acknowledged < sent) {
        const reply = (await writer.next(60_000)) as { res?: string }[];
        if (reply[0]?.res !== 'suc') throw new Error(`blk failed: ${JSON.stringify(reply)}`);
        acknowledged++;
        answered();
      }
    } finally {
      // A failed write stops the writer too; the error is thrown after the queries.
      stop = true;
      answered();
    }
  })();
  replies.catch(() => undefined);
  // The writes settle in first (new connection, code not yet compiled).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const ackedBefore = acknowledged;
  const from = now();
  const phase = await queries(server, token);
  const writeRate = ((acknowledged - ackedBefore) * WRITE_BATCH) / ((now() - from) / 1000);
  stop = true;
  await writing;
  await replies;
  await writer.close();
  return { ...phase, writeRate };
}

const met = (p99: number): string => (p99 <= TARGET_MS ? 'yes' : 'no');

function gcLine(figures: ServerFigures): string {
  const parts = [...figures.gc].map(([kind, { count, seconds }]) => `${kind} ${count} (${(seconds * 1000).toFixed(0)} ms)`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

function describe(phase: Phase): string {
  const l = phase.latencies;
  return `p50 ${ms(percentile(l, 50))}, p99 ${ms(percentile(l, 99))}, max ${ms(l[l.length - 1] ?? Number.NaN)}`;
}

async function main(): Promise<void> {
  log('starting the server');
  const server = await startBenchServer({
    adminToken,
    env: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000' },
    args: serverArgs,
    out: process.env.LOCUS_BENCH_SERVER_OUT,
  });
  try {
    const token = await benchRealm(server.httpUrl, adminToken, realm);
    log(`ingesting ${fmt(OBJECTS)} objects over REST`);
    const ingestRate = await ingest(server, token);
    log(`  ${fmt(ingestRate)} objects/s; ${fmt(QUERIES)} circle queries at once`);
    const quiet = await queries(server, token);
    log(`  ${describe(quiet)}; event loop p99 ${ms(quiet.server.lagP99)}, max ${ms(quiet.server.lagMax)}; gc ${gcLine(quiet.server)}${threadLine(quiet.server)}`);
    log(`${fmt(QUERIES)} circle queries while writing ${fmt(WRITE_RATE)} updates/s`);
    const busy = await queriesDuringIngest(server, token);
    log(`  ${describe(busy)}; ${fmt(busy.writeRate)} updates/s acknowledged; event loop p99 ${ms(busy.server.lagP99)}, max ${ms(busy.server.lagMax)}; gc ${gcLine(busy.server)}${threadLine(busy.server)}`);

    const row = (what: string, phase: Phase): string =>
      `| ${what} | p50 ${ms(percentile(phase.latencies, 50))}, p99 ${ms(percentile(phase.latencies, 99))} (max ${ms(phase.latencies[phase.latencies.length - 1] ?? Number.NaN)}; ${phase.returned.toFixed(0)} objects on average) | p99 ≤ ${TARGET_MS} ms | ${met(percentile(phase.latencies, 99))} |`;
    const serverRow = (what: string, phase: Phase): string =>
      `| ${what} | event-loop delay p99 ${ms(phase.server.lagP99)}, max ${ms(phase.server.lagMax)}; collections: ${gcLine(phase.server)}${threadLine(phase.server)} | – | – |`;
    const lines = [
      '## Query latency over HTTP while writing',
      '',
      `Real server in a child process (\`npm start\`'s Node.js options, SQLite file, loopback). ${fmt(OBJECTS)} new objects ` +
        `(location, label, four data fields) in a 100 km × 100 km square are written through REST v2 bulk requests of ` +
        `${fmt(BATCH)}, one at a time (${fmt(ingestRate)} objects/s). Then ${fmt(QUERIES)} circle queries (r = 1 km, ` +
        '`GET /v2/realm/<r>/object?shape=`) at random places, sequential over one keep-alive connection, timed from request to ' +
        'the whole body: first at once after the last bulk is acknowledged (the search index, the WAL checkpoints and the ' +
        `collector still catching up), then while one v1 TCP connection writes \`obj blk\` frames of ${WRITE_BATCH} location ` +
        `updates of existing objects at a fixed pace of ${fmt(WRITE_RATE)} updates/s (at most ${WRITE_WINDOW} frames unanswered; ${fmt(busy.writeRate)}/s acknowledged ` +
        "while the queries ran). With each phase, the server's event-loop delay (prom-client's `nodejs_eventloop_lag_*`, " +
        '10 ms resolution), its garbage collections (count, total pause) and how much of the phase its main thread ran on a ' +
        'CPU and waited for one (`/proc/<pid>/task/<pid>/schedstat`: waiting means the host was busy with other work).',
      '',
      '| Measure | Result | Target | Met |',
      '|---|---|---|---|',
      row('circle 1 km, right after the ingest', quiet),
      serverRow('server meanwhile', quiet),
      row(`circle 1 km, during ${fmt(WRITE_RATE)} updates/s`, busy),
      serverRow('server meanwhile', busy),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    agent.destroy();
    await stopBenchServer(server);
  }
}

await main();
