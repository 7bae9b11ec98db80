/**
 * `npm run bench -- mongodb`: the workloads of the other benches on the MongoDB store, when
 * LOCUS_TEST_MONGODB_URI names a server (the GitHub workflow's `mongo` service, or a
 * MongoDB-compatible server such as FerretDB); without it, one line says it was skipped.
 * Prints a markdown section on stdout; progress goes to stderr.
 *
 * 1. The store through its port (as query.bench.ts uses SQLite): bulk ingest of new objects
 *    (batches of 10,000; the objects of query.bench.ts: a 100 km square around Berlin, a
 *    label, five data fields), location updates of objects picked at random (batches of
 *    10,000), then a 1 km circle, a rare filter (`fuel<0.01`) and a common-prefix search
 *    (`müller`, …), each RUNS times at random places.
 * 2. The server with LOCUS_STORE on that MongoDB: a fleet of 200 TCP connections, each
 *    sending `obj`/`upd` of one object and awaiting the reply (as protocol.bench.ts), three
 *    runs, the median reported, with the server's CPU time and bytes written per update.
 *
 * Where the database's processes are on this machine (`mongod`, or FerretDB's `ferretdb`
 * and `postgres`), their CPU time and disk writes per update are reported too: the
 * database's share of an update's cost, for the capacity model of docs/performance.md.
 *
 * Knobs: LOCUS_BENCH_MONGODB_OBJECTS (default 100,000: an emulating server such as FerretDB
 * is far slower than MongoDB), LOCUS_BENCH_MONGODB_UPDATES (default the smaller of that and
 * 100,000), LOCUS_BENCH_MONGODB_RUNS (queries per kind, default 100),
 * LOCUS_BENCH_MONGODB_FLEET_OBJECTS (objects the fleet moves, default 10,000, as protocol.bench.ts),
 * LOCUS_BENCH_MONGODB_PARTS (store, fleet; default both); LOCUS_BENCH_SERVER_ARGS adds Node.js
 * options to the fleet server's command line (as protocol.bench.ts: `--cpu-prof --cpu-prof-dir=…`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseFilter } from '../../internal/domain/filter.js';
import { parseSearchQuery } from '../../internal/domain/search.js';
import type { ObjectPatch, Shape } from '../../internal/domain/types.js';
import type { MongoStore } from '../../internal/store/mongodb/mongo-store.js';
import { benchObjectCount, random } from '../support/bench-areas.js';
import { now } from '../support/bench-clock.js';
import { benchRealm, benchRequest } from '../support/bench-http.js';
import { mulberry32 } from '../support/bench-random.js';
import { benchAdminToken as adminToken, startBenchServer, stopBenchServer, type BenchServer } from '../support/bench-server.js';
import { fmt, median, percentile, processUse, usePerOperation } from '../support/bench-stats.js';
import { dropStoreDatabases, freshMongoStore, testMongoUri, withDatabase } from '../support/mongodb.js';
import { connectTcp, type V1Client } from '../support/v1-clients.js';

const TOTAL = Number(process.env.LOCUS_BENCH_MONGODB_OBJECTS ?? 100_000);
const UPDATES = Number(process.env.LOCUS_BENCH_MONGODB_UPDATES ?? Math.min(TOTAL, 100_000));
const RUNS = Number(process.env.LOCUS_BENCH_MONGODB_RUNS ?? 100);
const parts = new Set((process.env.LOCUS_BENCH_MONGODB_PARTS ?? 'store,fleet').split(','));
const BATCH = 10_000;
const LIMIT = 1000;
const REALM = 'bench';
const fleetConnections = 200;
/** Objects the fleet moves (`obj-0` …), made before it runs. */
const fleetObjects = Number(process.env.LOCUS_BENCH_MONGODB_FLEET_OBJECTS ?? benchObjectCount);
const fleetRuns = 3;
const fleetWarmupMs = 1000;
const fleetMs = 4000;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

const CENTRE_LON = 13.4;
const CENTRE_LAT = 52.5;
const HALF_LON = 50_000 / (111_320 * Math.cos((CENTRE_LAT * Math.PI) / 180));
const HALF_LAT = 50_000 / 110_574;
const KINDS = ['truck', 'van', 'car', 'bike'] as const;
const FIRST = ['Anna', 'Ben', 'Clara', 'David', 'Emma', 'Felix', 'Greta', 'Hugo', 'Ida', 'Jonas'];
const SURNAMES = ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann'];
const SUFFIXES = ['', 'son', 'berg', 'mann', 'feld', 'ström', 'dorf', 'hausen', 'bach', 'stein', 'thal', 'wald', 'brück', 'hof', 'burg', 'heim', 'kamp', 'rode', 'see', 'ow'];
const LAST = Array.from({ length: 200 }, (_, i) => `${SURNAMES[i % 10] ?? ''}${SUFFIXES[Math.floor(i / 10)] ?? ''}`);

const rnd = mulberry32(20_260_101);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
const baseTime = Date.parse('2026-01-01T00:00:00.000Z');
const isoAt = (ms: number): string => new Date(ms).toISOString();
const metres = (m: number): { lon: number; lat: number } => ({ lon: m / (111_320 * Math.cos((CENTRE_LAT * Math.PI) / 180)), lat: m / 110_574 });

/** Where each object is (the update phase moves them a little). */
const lons = new Float64Array(TOTAL);
const lats = new Float64Array(TOTAL);

/** The objects of query.bench.ts: a label, a location with time and five data fields. */
function objectPatch(i: number, timeMs: number): ObjectPatch {
  const kind = KINDS[i % KINDS.length] as (typeof KINDS)[number];
  lons[i] = CENTRE_LON + (rnd() * 2 - 1) * HALF_LON;
  lats[i] = CENTRE_LAT + (rnd() * 2 - 1) * HALF_LAT;
  return {
    id: `${kind}/${i}`,
    label: `${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)} ${i}`,
    location: { longitude: lons[i] ?? 0, latitude: lats[i] ?? 0, speed: Math.floor(rnd() * 30), time: isoAt(timeMs) },
    data: {
      kind,
      speed: Math.floor(rnd() * 121),
      fuel: Math.round(rnd() * 1000) / 1000,
      driver: `${pick(FIRST)} ${pick(LAST)}`,
      active: rnd() < 0.9,
    },
  };
}

function circle(): Shape {
  const lon = CENTRE_LON + (rnd() * 2 - 1) * HALF_LON * 0.9;
  const lat = CENTRE_LAT + (rnd() * 2 - 1) * HALF_LAT * 0.9;
  return { cx: lon, cy: lat, r: 1000 };
}

/** The database's processes on this machine, by command name: FerretDB's (with its PostgreSQL) or mongod. */
const DATABASE_COMMANDS = new Set(['ferretdb', 'postgres', 'mongod']);

interface DatabaseUse {
  cpuMs: number;
  /** Bytes the processes wrote to storage (/proc/<pid>/io write_bytes; not those of processes that ended meanwhile); NaN where not readable. */
  written: number;
  processes: number;
}

/** The CPU time and storage writes so far of every database process visible here; null when there is none. */
function databaseUse(): DatabaseUse | null {
  let cpuMs = 0;
  let written = 0;
  let processes = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of entries) {
    try {
      if (!DATABASE_COMMANDS.has(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // With the CPU of children that ended (PostgreSQL's backends end with their connections).
      cpuMs += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
      processes++;
      try {
        written += Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
      } catch {
        written = Number.NaN;
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return processes === 0 ? null : { cpuMs, written, processes };
}

interface DatabaseCost {
  cpuUs: number;
  bytes: number;
}

function databaseCost(from: DatabaseUse | null, to: DatabaseUse | null, operations: number): DatabaseCost {
  if (from === null || to === null || operations === 0) return { cpuUs: Number.NaN, bytes: Number.NaN };
  return { cpuUs: ((to.cpuMs - from.cpuMs) * 1000) / operations, bytes: (to.written - from.written) / operations };
}

const cost = (c: DatabaseCost): string =>
  Number.isFinite(c.cpuUs) ? `${c.cpuUs.toFixed(0)} µs CPU${Number.isFinite(c.bytes) ? `, ${fmt(c.bytes)} B to storage` : ''}` : 'not visible from here';

interface StoreFigures {
  ingestRate: number;
  ingestDb: DatabaseCost;
  ingestCpuUs: number;
  updateRate: number;
  updateDb: DatabaseCost;
  updateCpuUs: number;
  queries: { name: string; p50: number; p99: number; returned: number }[];
}

/** This process's CPU time (ms), for the store's own cost per update. */
const ownCpuMs = (): number => {
  const use = process.cpuUsage();
  return (use.user + use.system) / 1000;
};

async function storeWorkloads(uri: string): Promise<StoreFigures> {
  const store: MongoStore = await freshMongoStore(uri);
  try {
    await store.realms.put(REALM, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, isoAt(baseTime));
    log(`ingesting ${TOTAL} objects in batches of ${BATCH}`);
    let storeMs = 0;
    let ingestCpu = 0;
    const ingestFrom = databaseUse();
    for (let start = 0; start < TOTAL; start += BATCH) {
      const patches: ObjectPatch[] = [];
      for (let i = start; i < Math.min(TOTAL, start + BATCH); i++) patches.push(objectPatch(i, baseTime + i));
      const t0 = performance.now();
      const c0 = ownCpuMs();
      await store.objects.upsertMany(REALM, patches, isoAt(baseTime + start));
      ingestCpu += ownCpuMs() - c0;
      storeMs += performance.now() - t0;
    }
    const ingestDb = databaseCost(ingestFrom, databaseUse(), TOTAL);
    const ingestRate = (TOTAL / storeMs) * 1000;
    log(`ingest: ${fmt(ingestRate)} objects/s; database ${cost(ingestDb)} per object`);

    log(`updating ${UPDATES} locations in batches of ${BATCH}`);
    let updateMs = 0;
    let updateCpu = 0;
    const updateFrom = databaseUse();
    for (let start = 0; start < UPDATES; start += BATCH) {
      const patches: ObjectPatch[] = [];
      for (let k = 0; k < Math.min(BATCH, UPDATES - start); k++) {
        const i = Math.floor(rnd() * TOTAL);
        const step = metres(30);
        lons[i] = (lons[i] ?? 0) + (rnd() * 2 - 1) * step.lon;
        lats[i] = (lats[i] ?? 0) + (rnd() * 2 - 1) * step.lat;
        patches.push({ id: `${KINDS[i % KINDS.length] ?? ''}/${i}`, location: { longitude: lons[i] ?? 0, latitude: lats[i] ?? 0, time: isoAt(baseTime + TOTAL + start + k) } });
      }
      const t0 = performance.now();
      const c0 = ownCpuMs();
      await store.objects.upsertMany(REALM, patches, isoAt(baseTime + TOTAL + start));
      updateCpu += ownCpuMs() - c0;
      updateMs += performance.now() - t0;
    }
    const updateDb = databaseCost(updateFrom, databaseUse(), UPDATES);
    const updateRate = (UPDATES / updateMs) * 1000;
    log(`updates: ${fmt(updateRate)} objects/s; database ${cost(updateDb)} per update`);

    const queries: StoreFigures['queries'] = [];
    const measure = async (name: string, run: () => Promise<number>): Promise<void> => {
      for (let i = 0; i < Math.min(10, RUNS); i++) await run();
      const times: number[] = [];
      let returned = 0;
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        returned += await run();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const row = { name, p50: percentile(times, 50), p99: percentile(times, 99), returned: returned / RUNS };
      queries.push(row);
      log(`  ${name}: p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, ${row.returned.toFixed(0)} objects`);
    };
    log(`queries, ${RUNS} runs each`);
    await measure('circle, r = 1 km', async () => (await store.objects.list(REALM, { limit: LIMIT, fields: null, shape: circle() })).items.length);
    await measure('filter only, rare (`fuel<0.01`, about 1% match)', async () =>
      (await store.objects.list(REALM, { limit: LIMIT, fields: null, filter: parseFilter('fuel<0.01', 100) })).items.length,
    );
    await measure('search, common prefix (`müller`, …: a tenth of the objects, the best 1,000)', async () =>
      (await store.objects.search(REALM, { words: parseSearchQuery(pick(SURNAMES)), limit: LIMIT, fields: null })).length,
    );
    return {
      ingestRate,
      ingestDb,
      ingestCpuUs: (ingestCpu * 1000) / TOTAL,
      updateRate,
      updateDb,
      updateCpuUs: (updateCpu * 1000) / UPDATES,
      queries,
    };
  } finally {
    await store.close();
  }
}

interface FleetRun {
  rate: number;
  /** Server CPU per update, less what the server spends idle in the same time (below). */
  cpuUs: number;
  bytes: number;
  db: DatabaseCost;
}

/** 200 connections, each sending `upd` of one random object and awaiting the reply. */
async function fleetRun(server: BenchServer, clients: readonly V1Client[], seed: number, idleCpuMsPerS: number): Promise<FleetRun> {
  const next = random(seed);
  let counting = false;
  let stopped = false;
  let counted = 0;
  const run = async (client: V1Client): Promise<void> => {
    while (!stopped) {
      const loc = { lon: 5 + next() * 10, lat: 45 + next() * 10 };
      const [reply] = await client.request([{ typ: 'obj', act: 'upd', cid: 'f', id: `obj-${Math.floor(next() * fleetObjects)}`, rea: REALM, loc }], 30_000);
      if (reply?.res !== 'suc') throw new Error(`upd failed: ${JSON.stringify(reply)}`);
      if (counting) counted++;
    }
  };
  const runs = clients.map(run);
  await new Promise((resolve) => setTimeout(resolve, fleetWarmupMs));
  counting = true;
  const started = now();
  const use = processUse(server.child.pid);
  const dbFrom = databaseUse();
  await new Promise((resolve) => setTimeout(resolve, fleetMs));
  counting = false;
  const end = processUse(server.child.pid);
  const dbTo = databaseUse();
  const seconds = (now() - started) / 1000;
  stopped = true;
  await Promise.all(runs);
  const spent = usePerOperation(use, end, counted);
  return { rate: counted / seconds, cpuUs: spent.cpuUs - (idleCpuMsPerS * seconds * 1000) / counted, bytes: spent.bytes, db: databaseCost(dbFrom, dbTo, counted) };
}

async function fleetWorkload(uri: string): Promise<{ runs: FleetRun[]; idleCpuMsPerS: number }> {
  const control = `lbench${process.pid}`;
  const server = await startBenchServer({
    adminToken,
    env: {
      LOCUS_STORE: withDatabase(uri, control),
      LOCUS_RATE_LIMIT: '1000000',
      LOCUS_RATE_BURST: '1000000',
      LOCUS_MAX_CONNECTIONS: String(fleetConnections + 100),
    },
    args: (process.env.LOCUS_BENCH_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  });
  try {
    const token = await benchRealm(server.httpUrl, adminToken, REALM);
    // Every object of the fleet exists before it runs (`upd` moves existing objects here).
    const objects = Array.from({ length: fleetObjects }, (_, i) => ({ id: `obj-${i}`, location: { longitude: 10, latitude: 50 } }));
    for (let i = 0; i < objects.length; i += 1000) await benchRequest(server.httpUrl, token, 'POST', `/v2/realm/${REALM}/object`, { objects: objects.slice(i, i + 1000) });
    const clients = await Promise.all(Array.from({ length: fleetConnections }, () => connectTcp(server.tcpPort, token)));
    // At a database's low rates, what the server spends idle (timers, the driver's monitoring)
    // would count as part of each update: it is measured alone first and left out.
    const idleFrom = processUse(server.child.pid);
    const idleStart = now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const idleTo = processUse(server.child.pid);
    const idleCpuMsPerS = idleFrom === null || idleTo === null ? 0 : (idleTo.cpuMs - idleFrom.cpuMs) / ((now() - idleStart) / 1000);
    log(`server idle: ${idleCpuMsPerS.toFixed(1)} ms CPU per second`);
    const runs: FleetRun[] = [];
    for (let r = 1; r <= fleetRuns; r++) {
      log(`fleet of ${fleetConnections} connections, run ${r}`);
      const run = await fleetRun(server, clients, 7 + r, idleCpuMsPerS);
      runs.push(run);
      log(`  ${fmt(run.rate)} updates/s; server ${run.cpuUs.toFixed(1)} µs CPU and ${fmt(run.bytes)} B written per update; database ${cost(run.db)} per update`);
    }
    await Promise.all(clients.map((c) => c.close()));
    return { runs, idleCpuMsPerS };
  } finally {
    await stopBenchServer(server);
    await dropStoreDatabases(uri, control);
  }
}

async function serverVersion(uri: string): Promise<string> {
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    const ferret = (info as { ferretdb?: { version?: string } }).ferretdb;
    if (ferret === undefined) return `MongoDB ${String(info.version)}`;
    return `FerretDB${ferret.version === undefined || ferret.version === 'unknown' ? '' : ` ${ferret.version}`} (reporting MongoDB ${String(info.version)})`;
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const out: string[] = ['## MongoDB store', ''];
  if (testMongoUri === null) {
    out.push('Skipped: LOCUS_TEST_MONGODB_URI is not set (test/bench/mongodb.bench.ts runs against the server it names).');
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }
  const version = await serverVersion(testMongoUri);
  log(`database: ${version}`);
  const store = parts.has('store') ? await storeWorkloads(testMongoUri) : null;
  const fleet = parts.has('fleet') ? await fleetWorkload(testMongoUri) : null;

  out.push(`Produced by \`test/bench/mongodb.bench.ts\` against ${version} on this machine (loopback). Database CPU and`);
  out.push('storage writes are those of its processes on this machine, where visible. An emulating server (FerretDB on');
  out.push("PostgreSQL) is not MongoDB: its figures say what locus's MongoDB adapter asks of a database, not MongoDB's speed.");
  out.push('');
  out.push('| Workload | Result | locus CPU per update | Database per update |');
  out.push('|---|---|---|---|');
  if (store !== null) {
    out.push(`| Bulk ingest, ${fmt(TOTAL)} new objects (store port, batches of 10,000) | ${fmt(store.ingestRate)} objects/s | ${store.ingestCpuUs.toFixed(1)} µs | ${cost(store.ingestDb)} |`);
    out.push(`| Location updates of ${fmt(UPDATES)} objects picked at random (batches of 10,000) | ${fmt(store.updateRate)} updates/s | ${store.updateCpuUs.toFixed(1)} µs | ${cost(store.updateDb)} |`);
    for (const q of store.queries) out.push(`| ${q.name}, ${RUNS} runs at ${fmt(TOTAL)} objects (${q.returned.toFixed(0)} returned on average) | p50 ${q.p50.toFixed(2)} ms, p99 ${q.p99.toFixed(2)} ms | — | — |`);
  }
  if (fleet !== null) {
    const mid = median(fleet.runs.map((r) => r.rate));
    const at = fleet.runs.find((r) => r.rate === mid) ?? fleet.runs[0];
    out.push(
      `| Fleet: ${fleetConnections} TCP connections, each one \`upd\` awaiting the reply (server process, ${fmt(fleetObjects)} objects; median of ${fleetRuns} runs: ${fleet.runs.map((r) => fmt(r.rate)).join(' / ')}; the server's idle ${fleet.idleCpuMsPerS.toFixed(0)} ms CPU per second left out) | ${fmt(mid)} updates/s | ${at?.cpuUs.toFixed(1) ?? '–'} µs (and ${fmt(at?.bytes ?? Number.NaN)} B written, sockets included) | ${at === undefined ? '–' : cost(at.db)} |`,
    );
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
