/**
 * `npm run bench -- peers`: the workloads of issue #32 on locus and on its peers (Redis,
 * PostgreSQL with PostGIS, and Tile38 when TILE38_BIN names its binary), from the same generated
 * data, in one run; prints one markdown section with locus's ratio to each peer. Progress goes
 * to stderr.
 *
 * Method. Each server runs as a child process on loopback, alone: started, loaded, measured and
 * stopped before the next starts (locus: `dist/cmd/server.js` as `npm start` runs it, SQLite in a
 * temporary directory; the peers from their binaries with their default settings, in temporary
 * directories; see each test/support/peer-*.ts). One load generator design drives all of them:
 * raw sockets (node:net) in this process, no client libraries; requests are encoded before the
 * clock starts where a workload allows it, and replies decoded by a lean parser per protocol
 * (v1 lines and HTTP/1.1 for locus, RESP for Redis and Tile38, the PostgreSQL wire protocol's
 * simple query for PostGIS). Every figure comes with the server's CPU time per operation (all
 * its threads and processes, from /proc) and the load generator's own (process.cpuUsage), so
 * a reader can see that the generator was not the bottleneck.
 *
 * Before each workload but the first circle queries (which are meant to follow the ingest), the
 * bench waits until the server is idle, so that none pays for the background work of the last.
 *
 * Workloads, in this order on each system:
 * 1. Bulk ingest of the objects (default 200,000): batches of 1,000 objects in the system's
 *    bulk form, 4 in flight on one connection.
 * 2. Circle query (1 km, at most 1,000 results), one connection, one query at a time: p50/p99
 *    right after the ingest.
 * 3. A fleet: 200 connections, each sending the update of one object and awaiting the reply
 *    before the next; updates/s over 4 s after 0.5 s not counted. locus twice: `cre` with one
 *    write token per connection (as trackers with their own credentials), and `upd` with one
 *    token on every connection.
 * 4. Updates of existing objects picked at random, batches of 10,000, one at a time.
 * 5. The circle query again while a paced ingest of 20,000 updates/s (a batch of 200 every
 *    10 ms, in the bulk form) runs on another connection.
 * 6. A rare filter (`fuel<0.01`, about 1%, at most 1,000) and a common-prefix search (`müller`,
 *    the first word of about 10% of the labels, at most 1,000), where the system has one.
 * 7. Memory after all that: the resident set of the server (PostgreSQL: the private memory of
 *    its processes plus the shared buffers in use; see peer-process.ts treeMemory).
 *
 * Env knobs: LOCUS_BENCH_PEERS_OBJECTS (default 200000), LOCUS_BENCH_PEERS_ONLY (comma-separated
 * of locus, redis, postgis, tile38), LOCUS_BENCH_PEERS_CONNECTIONS (default 200),
 * LOCUS_BENCH_PEERS_FLEET_MS (counted time of a fleet run, default 4000), LOCUS_BENCH_PEERS_QUERIES
 * (timed queries per latency figure, default 200), LOCUS_BENCH_PEERS_QUERY_BUDGET_MS (time after
 * which slow queries stop early, at no fewer than 50, default 15000), LOCUS_BENCH_PEERS_PG_FSYNC
 * (`on`: PostgreSQL's default durability, see peer-postgis.ts), TILE38_BIN (the tile38-server binary).
 */
import { performance } from 'node:perf_hooks';
import { fmt, percentile } from '../support/bench-stats.js';
import { commonPrefix, generateCentres, generateObjects, generateUpdates, type PeerObjects, type PeerUpdates } from '../support/peer-data.js';
import { startLocus } from '../support/peer-locus.js';
import { startPostgis } from '../support/peer-postgis.js';
import { treeCpuMs, treeMemory, type TreeMemory } from '../support/peer-process.js';
import { startRedis } from '../support/peer-redis.js';
import type { BulkWriter, EncodedBatch, PeerSystem, Queries, Skipped } from '../support/peer-system.js';
import { startTile38 } from '../support/peer-tile38.js';

const objectCount = Number(process.env.LOCUS_BENCH_PEERS_OBJECTS ?? 200_000);
const connections = Number(process.env.LOCUS_BENCH_PEERS_CONNECTIONS ?? 200);
const fleetMs = Number(process.env.LOCUS_BENCH_PEERS_FLEET_MS ?? 4000);
const queryRuns = Number(process.env.LOCUS_BENCH_PEERS_QUERIES ?? 200);
const queryBudgetMs = Number(process.env.LOCUS_BENCH_PEERS_QUERY_BUDGET_MS ?? 15_000);
const minimumQueries = Math.min(queryRuns, 50);
const only = new Set((process.env.LOCUS_BENCH_PEERS_ONLY ?? 'locus,redis,postgis,tile38').split(',').map((s) => s.trim().toLowerCase()));

const ingestBatch = 1000;
const ingestWindow = 4;
const updateBatch = 10_000;
const updateCount = Math.min(objectCount, 200_000);
const pacedRate = 20_000;
const pacedTickMs = 10;
const pacedBatch = (pacedRate * pacedTickMs) / 1000;
/** Paced batches sent and not yet answered, at most: beyond, a tick is skipped (and the achieved rate shows it). */
const pacedInFlight = 4;
const warmupMs = 500;
const warmupQueries = 20;
const circleMetres = 1000;
const settleMaxMs = 30_000;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/** The server's and the load generator's CPU time per operation over a measured stretch. */
interface Cost {
  serverUs: number;
  loaderUs: number;
}

interface Rate extends Cost {
  rate: number;
}

interface Latency extends Cost {
  p50: number;
  p99: number;
  returned: number;
  /** Timed queries (fewer than queryRuns where they ran out of queryBudgetMs). */
  runs: number;
}

interface SystemResult {
  name: string;
  describe: string;
  ingest: Rate;
  circleQuiet: Latency;
  fleet: (Rate & { variant: string })[];
  updates: Rate;
  circleBusy: Latency & { ingestRate: number };
  rare: Latency | null;
  prefix: Latency | null;
  memory: TreeMemory;
}

/** Starts measuring the server's (process tree) and this process's CPU time. */
function costMeter(pid: number): (operations: number) => Cost {
  const server = treeCpuMs(pid);
  const loader = process.cpuUsage();
  return (operations) => {
    const used = process.cpuUsage(loader);
    return {
      serverUs: ((treeCpuMs(pid) - server) * 1000) / operations,
      loaderUs: (used.user + used.system) / operations,
    };
  };
}

/**
 * Waits until the server is idle (below a tenth of a core over each of two quarter-seconds; at
 * most settleMaxMs), so that work left from the last workload (locus's search indexing after an
 * ingest, PostgreSQL's autovacuum, a Redis snapshot) is not counted against the next one.
 */
async function settle(system: PeerSystem): Promise<void> {
  const deadline = performance.now() + settleMaxMs;
  let quiet = 0;
  let before = treeCpuMs(system.pid);
  while (quiet < 2 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = treeCpuMs(system.pid);
    quiet = now - before < 25 ? quiet + 1 : 0;
    before = now;
  }
}

/** Pre-encodes `count` items in batches of `size` with `encode(from, to)`. */
function encodeAll(count: number, size: number, encode: (from: number, to: number) => EncodedBatch): EncodedBatch[] {
  const batches: EncodedBatch[] = [];
  for (let from = 0; from < count; from += size) batches.push(encode(from, Math.min(count, from + size)));
  return batches;
}

/** Writes every batch with `window` in flight; operations per second and their cost. */
async function bulk(system: PeerSystem, writer: BulkWriter, batches: readonly EncodedBatch[], operations: number, window: number): Promise<Rate> {
  let next = 0;
  const meter = costMeter(system.pid);
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < batches.length) await writer.write(batches[next++] as EncodedBatch);
  };
  await Promise.all(Array.from({ length: window }, lane));
  const seconds = (performance.now() - started) / 1000;
  return { rate: operations / seconds, ...meter(operations) };
}

/**
 * Runs `query` one at a time: warmupQueries not timed, then queryRuns timed; p50/p99 of those.
 * A slow query (a scan) stops earlier: the warm-up after a tenth of queryBudgetMs, the timed
 * runs after queryBudgetMs but not before minimumQueries, so the whole bench keeps its length.
 */
async function latency(system: PeerSystem, query: (run: number) => Promise<number>): Promise<Latency> {
  const warmupEnd = performance.now() + queryBudgetMs / 10;
  let run = 0;
  for (; run < warmupQueries && performance.now() < warmupEnd; run++) await query(run);
  const times: number[] = [];
  let returned = 0;
  const meter = costMeter(system.pid);
  const end = performance.now() + queryBudgetMs;
  while (times.length < queryRuns && (times.length < minimumQueries || performance.now() < end)) {
    const t0 = performance.now();
    returned += await query(run++);
    times.push(performance.now() - t0);
  }
  const cost = meter(times.length);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), returned: returned / times.length, runs: times.length, ...cost };
}

/** `connections` clients, each sending one update and awaiting it, for warmupMs + fleetMs. */
async function fleet(
  system: PeerSystem,
  open: (count: number) => ReturnType<PeerSystem['fleetVariants'][number]['open']>,
  moves: PeerUpdates,
  cursor: { next: number },
): Promise<Rate> {
  const clients = await open(connections);
  let counting = false;
  let stopped = false;
  let counted = 0;
  const run = async (client: (typeof clients)[number]): Promise<void> => {
    while (!stopped) {
      const k = cursor.next++ % moves.index.length;
      await client.update(moves.index[k] as number, moves.lon[k] as number, moves.lat[k] as number);
      if (counting) counted++;
    }
  };
  const runs = clients.map(run);
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  counting = true;
  const meter = costMeter(system.pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, fleetMs));
  counting = false;
  const cost = meter(counted);
  const seconds = (performance.now() - started) / 1000;
  stopped = true;
  await Promise.all(runs);
  await Promise.all(clients.map((c) => c.close()));
  return { rate: counted / seconds, ...cost };
}

/**
 * Circle queries while another connection writes `pacedBatch` updates every `pacedTickMs`
 * (a tick is skipped while `pacedInFlight` batches are unanswered); the achieved write rate too.
 */
async function circleDuringIngest(system: PeerSystem, queries: Queries, batches: readonly EncodedBatch[], centres: readonly { lon: number; lat: number }[]): Promise<Latency & { ingestRate: number }> {
  const writer = await system.openBulk();
  let inFlight = 0;
  let sent = 0;
  let acked = 0;
  // A holder, not a variable: the callbacks below set it.
  const failed: { error: Error | null } = { error: null };
  const started = performance.now();
  let ticks = 0;
  const timer = setInterval(() => {
    // Catches up with the ticks due by now (timers fire late under load).
    const due = Math.floor((performance.now() - started) / pacedTickMs);
    for (; ticks < due; ticks++) {
      if (inFlight >= pacedInFlight) continue;
      inFlight++;
      writer.write(batches[sent++ % batches.length] as EncodedBatch).then(
        () => {
          inFlight--;
          acked++;
        },
        (error: unknown) => {
          failed.error = error instanceof Error ? error : new Error(String(error));
        },
      );
    }
  }, pacedTickMs);
  try {
    await new Promise((resolve) => setTimeout(resolve, warmupMs));
    const ackedBefore = acked;
    const from = performance.now();
    const result = await latency(system, (run) => {
      const c = centres[run % centres.length] as { lon: number; lat: number };
      return queries.circle(c.lon, c.lat, circleMetres);
    });
    const ingestRate = ((acked - ackedBefore) * pacedBatch) / ((performance.now() - from) / 1000);
    if (failed.error !== null) throw failed.error;
    return { ...result, ingestRate };
  } finally {
    clearInterval(timer);
    while (inFlight > 0 && failed.error === null) await new Promise((resolve) => setTimeout(resolve, 10));
    await writer.close();
  }
}

interface Workload {
  objects: PeerObjects;
  fleetMoves: PeerUpdates;
  randomUpdates: PeerUpdates;
  pacedUpdates: PeerUpdates;
  centres: { lon: number; lat: number }[];
}

async function measure(system: PeerSystem, work: Workload): Promise<SystemResult> {
  log(`${system.name}: encoding the ingest`);
  const ingestBatches = encodeAll(objectCount, ingestBatch, (from, to) => system.encodeIngest(work.objects, from, to));
  const writer = await system.openBulk();
  log(`${system.name}: ingesting ${fmt(objectCount)} objects`);
  const ingest = await bulk(system, writer, ingestBatches, objectCount, ingestWindow);
  log(`  ${fmt(ingest.rate)} objects/s`);
  ingestBatches.length = 0;

  const queries = await system.openQueries();
  const circle = (run: number): Promise<number> => {
    const c = work.centres[run % work.centres.length] as { lon: number; lat: number };
    return queries.circle(c.lon, c.lat, circleMetres);
  };
  const circleQuiet = await latency(system, circle);
  log(`  circle, quiet: p50 ${circleQuiet.p50.toFixed(2)} ms, p99 ${circleQuiet.p99.toFixed(2)} ms, ${circleQuiet.returned.toFixed(0)} objects`);

  const fleetRuns: SystemResult['fleet'] = [];
  // Each run continues the sequence of moves where the last stopped: the first update of an
  // object after its ingest may cost more than later ones, and no run should have them all.
  const fleetCursor = { next: 0 };
  for (const variant of system.fleetVariants) {
    await settle(system);
    log(`${system.name}: fleet of ${connections} connections, ${variant.name}`);
    const run = await fleet(system, (count) => variant.open(count), work.fleetMoves, fleetCursor);
    fleetRuns.push({ variant: variant.name, ...run });
    log(`  ${fmt(run.rate)} updates/s, server ${run.serverUs.toFixed(1)} µs, generator ${run.loaderUs.toFixed(1)} µs per update`);
  }

  log(`${system.name}: ${fmt(updateCount)} random updates in batches of ${fmt(updateBatch)}`);
  const updateBatches = encodeAll(updateCount, updateBatch, (from, to) => system.encodeUpdates(work.randomUpdates, from, to));
  await settle(system);
  const updates = await bulk(system, writer, updateBatches, updateCount, 1);
  log(`  ${fmt(updates.rate)} updates/s`);
  await writer.close();

  log(`${system.name}: circle queries during ${fmt(pacedRate)} updates/s`);
  const pacedBatches = encodeAll(work.pacedUpdates.index.length, pacedBatch, (from, to) => system.encodeUpdates(work.pacedUpdates, from, to));
  await settle(system);
  const circleBusy = await circleDuringIngest(system, queries, pacedBatches, work.centres);
  log(`  p50 ${circleBusy.p50.toFixed(2)} ms, p99 ${circleBusy.p99.toFixed(2)} ms; ingest ran at ${fmt(circleBusy.ingestRate)}/s`);

  const rareFilter = queries.rareFilter;
  await settle(system);
  const rare = rareFilter === null ? null : await latency(system, () => rareFilter());
  if (rare !== null) log(`  rare filter: p50 ${rare.p50.toFixed(2)} ms, p99 ${rare.p99.toFixed(2)} ms, ${rare.returned.toFixed(0)} objects`);
  const prefixSearch = queries.prefixSearch;
  await settle(system);
  const prefix = prefixSearch === null ? null : await latency(system, () => prefixSearch(commonPrefix));
  if (prefix !== null) log(`  prefix search: p50 ${prefix.p50.toFixed(2)} ms, p99 ${prefix.p99.toFixed(2)} ms, ${prefix.returned.toFixed(0)} objects`);
  // Read with the query connection still open: PostgreSQL's backend of it holds memory too.
  const memory = treeMemory(system.pid);
  await queries.close();
  log(`  memory: RSS ${memory.rssMiB.toFixed(0)} MiB; over ${memory.processes} processes ${memory.treeMiB.toFixed(0)} MiB`);
  return { name: system.name, describe: system.describe, ingest, circleQuiet, fleet: fleetRuns, updates, circleBusy, rare, prefix, memory };
}

type Better = 'higher' | 'lower';

interface Row {
  what: string;
  better: Better;
  value: (r: SystemResult) => number;
  format: (n: number) => string;
}

const rate = (n: number): string => fmt(n);
const millis = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)} ms` : '–');
const micros = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} µs` : '–');
const mib = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(0)} MiB` : '–');

/** Memory as the report states it: RSS of a single-process server; for one of many processes, see TreeMemory.treeMiB. */
const memoryOf = (r: SystemResult): number => (r.memory.processes > 1 ? r.memory.treeMiB : r.memory.rssMiB);

function rows(results: readonly SystemResult[]): Row[] {
  const locus = results.find((r) => r.name === 'locus');
  const fleetRows: Row[] = (locus?.fleet ?? [{ variant: '' }]).flatMap((run, i): Row[] => {
    // A peer has one fleet form; locus's rows each compare one of its forms with it.
    const pick = (r: SystemResult): (Rate & { variant: string }) | undefined => (r.name === 'locus' ? r.fleet[i] : r.fleet[0]);
    const form = locus === undefined ? '' : ` (locus: ${run.variant})`;
    return [
      { what: `Fleet: ${connections} connections, one awaited update each, updates/s${form}`, better: 'higher', value: (r) => pick(r)?.rate ?? Number.NaN, format: rate },
      { what: `Fleet: server CPU per update${form}`, better: 'lower', value: (r) => pick(r)?.serverUs ?? Number.NaN, format: micros },
    ];
  });
  return [
    { what: `Bulk ingest of ${fmt(objectCount)} objects, objects/s`, better: 'higher', value: (r) => r.ingest.rate, format: rate },
    ...fleetRows,
    { what: `Random updates of existing objects, batches of ${fmt(updateBatch)}, updates/s`, better: 'higher', value: (r) => r.updates.rate, format: rate },
    { what: 'Circle 1 km, right after the ingest, p50', better: 'lower', value: (r) => r.circleQuiet.p50, format: millis },
    { what: 'Circle 1 km, right after the ingest, p99', better: 'lower', value: (r) => r.circleQuiet.p99, format: millis },
    { what: `Circle 1 km during an ingest of ${fmt(pacedRate)} updates/s, p50`, better: 'lower', value: (r) => r.circleBusy.p50, format: millis },
    { what: `Circle 1 km during an ingest of ${fmt(pacedRate)} updates/s, p99`, better: 'lower', value: (r) => r.circleBusy.p99, format: millis },
    { what: 'Rare filter `fuel<0.01` (about 1%, at most 1,000), p50', better: 'lower', value: (r) => r.rare?.p50 ?? Number.NaN, format: millis },
    { what: 'Rare filter `fuel<0.01`, p99', better: 'lower', value: (r) => r.rare?.p99 ?? Number.NaN, format: millis },
    { what: `Common-prefix search \`${commonPrefix}\` (about 10% match, at most 1,000), p50`, better: 'lower', value: (r) => r.prefix?.p50 ?? Number.NaN, format: millis },
    { what: `Common-prefix search \`${commonPrefix}\`, p99`, better: 'lower', value: (r) => r.prefix?.p99 ?? Number.NaN, format: millis },
    { what: 'Memory after ingest and queries (RSS; PostgreSQL: private memory of its processes + shared buffers in use)', better: 'lower', value: memoryOf, format: mib },
  ];
}

/** locus ÷ peer, and whether that puts locus ahead on a row where `better` is better. */
function ratio(locus: number, peer: number, better: Better): string {
  if (!Number.isFinite(locus) || !Number.isFinite(peer) || peer === 0) return '–';
  const value = locus / peer;
  const ahead = better === 'higher' ? value >= 1 : value <= 1;
  return `${value >= 10 ? value.toFixed(0) : value.toFixed(2)}× (${ahead ? 'ahead' : 'behind'})`;
}

/** The cost table: server and generator CPU per operation of each workload on each system. */
function costRows(results: readonly SystemResult[]): string[] {
  // With a rate, also how busy the generator's one thread was: near 100%, it set the pace.
  const cell = (cost: Cost | null | undefined): string => {
    if (cost === null || cost === undefined) return '–';
    const busy = 'rate' in cost && typeof cost.rate === 'number' ? ` (generator ${((cost.loaderUs * cost.rate) / 10_000).toFixed(0)}% busy)` : '';
    const runs = 'runs' in cost && typeof cost.runs === 'number' ? ` (${cost.runs} queries)` : '';
    return `${micros(cost.serverUs)} / ${micros(cost.loaderUs)}${busy}${runs}`;
  };
  const maxFleet = Math.max(...results.map((r) => r.fleet.length));
  const lines: [string, (r: SystemResult) => Cost | null | undefined][] = [
    ['Bulk ingest, per object', (r) => r.ingest],
    ...Array.from({ length: maxFleet }, (_v, i): [string, (r: SystemResult) => Cost | undefined] => [
      `Fleet, per update${maxFleet > 1 ? ` (locus: ${results.find((r) => r.name === 'locus')?.fleet[i]?.variant ?? ''})` : ''}`,
      (r) => (r.name === 'locus' ? r.fleet[i] : r.fleet[0]),
    ]),
    ['Random updates, per update', (r) => r.updates],
    ['Circle, quiet, per query', (r) => r.circleQuiet],
    ['Circle during the ingest, per query (the ingest included)', (r) => r.circleBusy],
    ['Rare filter, per query', (r) => r.rare],
    ['Prefix search, per query', (r) => r.prefix],
  ];
  return [
    `| CPU per operation: server / load generator | ${results.map((r) => r.name).join(' | ')} |`,
    `|---|${results.map(() => '---|').join('')}`,
    ...lines.map(([what, get]) => `| ${what} | ${results.map((r) => cell(get(r))).join(' | ')} |`),
  ];
}

/** How many objects each query kind returned on average, per system. */
function returnedLine(results: readonly SystemResult[]): string {
  const kinds: [string, (r: SystemResult) => Latency | null][] = [
    ['circle', (r) => r.circleQuiet],
    ['rare filter', (r) => r.rare],
    ['prefix search', (r) => r.prefix],
  ];
  return kinds
    .map(([kind, get]) => `${kind} ${results.map((r) => `${r.name} ${get(r)?.returned.toFixed(0) ?? '–'}`).join(', ')}`)
    .join('; ');
}

function report(results: readonly SystemResult[], skipped: readonly Skipped[], elapsedS: number): string {
  const locus = results.find((r) => r.name === 'locus');
  const peers = results.filter((r) => r.name !== 'locus');
  const header = [
    'Workload (↑ higher is better, ↓ lower is better)',
    ...results.map((r) => r.name),
    ...(locus === undefined ? [] : peers.map((p) => `locus ÷ ${p.name}`)),
  ];
  const table = rows(results).map((row) => {
    const cells = results.map((r) => row.format(row.value(r)));
    const ratios = locus === undefined ? [] : peers.map((p) => ratio(row.value(locus), row.value(p), row.better));
    return `| ${row.what} ${row.better === 'higher' ? '↑' : '↓'} | ${[...cells, ...ratios].join(' | ')} |`;
  });
  return [
    `## Peers, side by side (\`test/bench/peers.bench.ts\`, ${fmt(objectCount)} objects)`,
    '',
    'Each system alone on loopback, from the same generated data, driven by one raw-socket load',
    'generator (no client libraries; requests pre-encoded where the workload allows). Ratios are',
    "locus's figure divided by the peer's: on ↑ rows above 1 means locus is ahead, on ↓ rows below 1",
    'does; "–" where a system has no equivalent. See docs/performance.md (Peers) for the method.',
    '',
    ...results.map((r) => `- ${r.describe}`),
    ...skipped.map((s) => `- ${s.name}: skipped, ${s.reason}`),
    `- The ingest beside the busy circle queries reached ${results.map((r) => `${r.name} ${fmt(r.circleBusy.ingestRate)}/s`).join(', ')} (target ${fmt(pacedRate)}/s).`,
    `- Queries: ${queryRuns} timed after ${warmupQueries} not timed, one at a time (slow ones fewer, as the cost table says); objects returned on average (the same answers): ${returnedLine(results)}.`,
    '',
    `| ${header.join(' | ')} |`,
    `|---|${header.slice(1).map(() => '---|').join('')}`,
    ...table,
    '',
    ...costRows(results),
    '',
    `The whole comparison took ${elapsedS.toFixed(0)} s.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const began = performance.now();
  log(`generating ${fmt(objectCount)} objects and their updates`);
  const objects = generateObjects(objectCount);
  // Updates move copies of the positions, so that every system ingests the same objects.
  const moving: PeerObjects = { ...objects, lon: objects.lon.slice(), lat: objects.lat.slice() };
  const work: Workload = {
    objects,
    fleetMoves: generateUpdates(moving, 400_000, 11),
    randomUpdates: generateUpdates(moving, updateCount, 12),
    pacedUpdates: generateUpdates(moving, pacedRate * 20, 13),
    centres: generateCentres(warmupQueries + queryRuns, 14),
  };
  const starters: [string, () => Promise<PeerSystem | Skipped>][] = [
    ['locus', () => startLocus(connections)],
    ['redis', startRedis],
    ['postgis', startPostgis],
    ['tile38', startTile38],
  ];
  const results: SystemResult[] = [];
  const skipped: Skipped[] = [];
  for (const [key, start] of starters) {
    if (!only.has(key)) continue;
    log(`starting ${key}`);
    const system = await start();
    if (!('pid' in system)) {
      log(`  skipped: ${system.reason}`);
      skipped.push(system);
      continue;
    }
    try {
      results.push(await measure(system, work));
    } finally {
      await system.stop();
    }
  }
  process.stdout.write(`${report(results, skipped, (performance.now() - began) / 1000)}\n`);
}

await main();
