/**
 * `npm run bench`: the query engine at a million objects, on the SQLite store used
 * directly through its port (no HTTP). Prints a markdown section on stdout; progress
 * goes to stderr.
 *
 * 1. Bulk ingest: 1,000,000 new objects (id, label, location with time, five data
 *    fields) through upsertMany in batches of 10,000, into a fresh file. Each batch is a
 *    committed transaction in WAL mode with synchronous=NORMAL: once upsertMany resolves,
 *    the batch survives a crash of the process (not a power loss before the next WAL
 *    checkpoint). The objects are written (a new object's fix is its current location,
 *    in its row; history holds past fixes only), and the in-memory spatial index updated; the full-text index is written by the store's indexer
 *    thread meanwhile, and the time until it holds every object is reported too (a
 *    search waits for it). Target ≥ 100,000 objects/s. Then the same for location
 *    updates of existing objects (the steady state of a tracking service).
 * 2. Queries, each at least 200 times at random places, each returning up to 1,000
 *    objects: p50/p99 for a 1 km circle, a rectangle, a 50-vertex polygon, a filter-only
 *    list, a combined list (filter + shape + fields) and a search. Targets: p99 ≤ 10 ms
 *    per shape query, ≤ 20 ms for search.
 *
 * The objects lie uniformly in a 100 km × 100 km square around Berlin (about 100 per
 * km²), so a 1 km circle holds about 300 of them.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseFilter } from '../../internal/domain/filter.js';
import { parseSearchQuery } from '../../internal/domain/search.js';
import type { ObjectPatch, Shape } from '../../internal/domain/types.js';
import type { ObjectListQuery } from '../../internal/store/port.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { mulberry32 } from '../support/bench-random.js';

const TOTAL = Number(process.env.LOCUS_BENCH_OBJECTS ?? 1_000_000);
/** LOCUS_BENCH_QUERIES=search,circle: only the query rows whose name holds one of these (for iteration). */
const QUERIES = process.env.LOCUS_BENCH_QUERIES?.split(',').filter((part) => part !== '');
const chosen = (name: string): boolean => QUERIES === undefined || QUERIES.some((part) => name.includes(part));
const BATCH = 10_000;
const RUNS = 200;
const LIMIT = 1000;
const REALM = 'bench';

const CENTRE_LON = 13.4;
const CENTRE_LAT = 52.5;
/** Half-widths of the square in degrees: 50 km east-west and north-south at 52.5°N. */
const HALF_LON = 50_000 / (111_320 * Math.cos((CENTRE_LAT * Math.PI) / 180));
const HALF_LAT = 50_000 / 110_574;

const KINDS = ['truck', 'van', 'car', 'bike'] as const;
const FIRST = ['Anna', 'Ben', 'Clara', 'David', 'Emma', 'Felix', 'Greta', 'Hugo', 'Ida', 'Jonas', 'Karla', 'Leon', 'Mia', 'Noah', 'Olga', 'Paul', 'Quinn', 'Rosa', 'Sven', 'Tilda', 'Uwe', 'Vera', 'Wim', 'Xenia', 'Yusuf', 'Zoë', 'Ahmed', 'Björn', 'Chiara', 'Dörte', 'Elif', 'František', 'Gül', 'Hanna', 'Ilse', 'Jürgen', 'Kemal', 'Lena', 'Mehmet', 'Nina', 'Oskar', 'Petra', 'Renée', 'Søren', 'Till', 'Ümit', 'Valentin', 'Wiebke', 'Yara', 'Zeynep'];
const LAST = Array.from({ length: 200 }, (_, i) => `${['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann'][i % 10]}${['', 'son', 'berg', 'mann', 'feld', 'ström', 'dorf', 'hausen', 'bach', 'stein', 'thal', 'wald', 'brück', 'hof', 'burg', 'heim', 'kamp', 'rode', 'see', 'ow'][Math.floor(i / 10)]}`);

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

const random = mulberry32(20_260_101);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

const baseTime = Date.parse('2026-01-01T00:00:00.000Z');
const isoAt = (ms: number): string => new Date(ms).toISOString();

/** Where each object is (for the update phase, which moves them a little). */
const lons = new Float64Array(TOTAL);
const lats = new Float64Array(TOTAL);

function objectPatch(i: number, timeMs: number): ObjectPatch {
  const kind = KINDS[i % KINDS.length] as (typeof KINDS)[number];
  lons[i] = CENTRE_LON + (random() * 2 - 1) * HALF_LON;
  lats[i] = CENTRE_LAT + (random() * 2 - 1) * HALF_LAT;
  return {
    id: `${kind}/${i}`,
    label: `${kind[0]?.toUpperCase() ?? ''}${kind.slice(1)} ${i}`,
    location: {
      longitude: lons[i] ?? 0,
      latitude: lats[i] ?? 0,
      speed: Math.floor(random() * 30),
      time: isoAt(timeMs),
    },
    data: {
      kind,
      speed: Math.floor(random() * 121),
      fuel: Math.round(random() * 1000) / 1000,
      driver: `${pick(FIRST)} ${pick(LAST)}`,
      active: random() < 0.9,
    },
  };
}

function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

const metres = (m: number): { lon: number; lat: number } => ({
  lon: m / (111_320 * Math.cos((CENTRE_LAT * Math.PI) / 180)),
  lat: m / 110_574,
});

/** A random place well inside the square. */
function place(): { lon: number; lat: number } {
  return {
    lon: CENTRE_LON + (random() * 2 - 1) * HALF_LON * 0.9,
    lat: CENTRE_LAT + (random() * 2 - 1) * HALF_LAT * 0.9,
  };
}

function circle(): Shape {
  const { lon, lat } = place();
  return { cx: lon, cy: lat, r: 1000 };
}

/** A 3.2 km × 3.2 km square: about 1,000 objects. */
function rectangle(): Shape {
  const { lon, lat } = place();
  const half = metres(1600);
  return { w: lon - half.lon, e: lon + half.lon, s: lat - half.lat, n: lat + half.lat };
}

/** A concave 50-vertex star, radii 1.2–2.4 km: about 800 objects. */
function polygon(): Shape {
  const { lon, lat } = place();
  const points: [number, number][] = [];
  for (let k = 0; k < 50; k++) {
    const angle = (2 * Math.PI * k) / 50;
    const r = metres(k % 2 === 0 ? 2400 : 1200);
    points.push([lon + r.lon * Math.cos(angle), lat + r.lat * Math.sin(angle)]);
  }
  return { points };
}

interface Row {
  name: string;
  what: string;
  p50: number;
  p99: number;
  mean: number;
  returned: number;
  target: number | null;
}

async function main(): Promise<void> {
  // LOCUS_BENCH_DB=<file> keeps the database for later runs, which then skip the ingest
  // (for working on queries; the report then says so).
  const kept = process.env.LOCUS_BENCH_DB;
  const reuse = kept !== undefined && existsSync(kept);
  const dir = mkdtempSync(join(tmpdir(), 'locus-query-bench-'));
  const path = kept ?? join(dir, 'locus.db');
  const store = openSqliteStore(path);
  try {
    let ingested: Ingested = { ingestRate: Number.NaN, updateRate: Number.NaN, searchableRate: Number.NaN, indexLagMs: Number.NaN };
    if (!reuse) {
      ingested = await ingest(store);
    } else {
      log(`reusing ${path}: no ingest`);
    }
    const size = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    const fileMb = [path, `${path}-wal`, `${path}-search`, `${path}-search-wal`].reduce((sum, file) => sum + size(file), 0) / 2 ** 20;
    await queries(store, { ...ingested, fileMb });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Ingested {
  ingestRate: number;
  updateRate: number;
  /** Objects per second counting until the full-text index held them all, and that wait. */
  searchableRate: number;
  indexLagMs: number;
}

async function ingest(store: SqliteStore): Promise<Ingested> {
  {
    await store.realms.put(REALM, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, isoAt(baseTime));

    // --- 1. bulk ingest of new objects
    log(`ingesting ${TOTAL} objects in batches of ${BATCH}`);
    let storeMs = 0;
    const wallStart = performance.now();
    for (let start = 0; start < TOTAL; start += BATCH) {
      const patches: ObjectPatch[] = [];
      for (let i = start; i < Math.min(TOTAL, start + BATCH); i++) patches.push(objectPatch(i, baseTime + i));
      const t0 = performance.now();
      await store.objects.upsertMany(REALM, patches, isoAt(baseTime + start));
      storeMs += performance.now() - t0;
      if ((start / BATCH) % 10 === 9) log(`  ${start + BATCH} objects, ${Math.round(((start + BATCH) / storeMs) * 1000)} objects/s`);
    }
    const wallMs = performance.now() - wallStart;
    const ingestRate = (TOTAL / storeMs) * 1000;
    log(`ingest: ${Math.round(ingestRate)} objects/s in upsertMany (${Math.round((TOTAL / wallMs) * 1000)}/s with generation)`);
    const waitStart = performance.now();
    await store.objects.indexed();
    const indexLagMs = performance.now() - waitStart;
    const searchableRate = (TOTAL / (storeMs + indexLagMs)) * 1000;
    log(`  searchable ${Math.round(indexLagMs)} ms after the last batch: ${Math.round(searchableRate)} objects/s`);

    // --- location updates of existing objects (random ids, new fixes)
    const UPDATES = Math.min(TOTAL, 200_000);
    log(`updating ${UPDATES} locations in batches of ${BATCH}`);
    let updateMs = 0;
    for (let start = 0; start < UPDATES; start += BATCH) {
      const patches: ObjectPatch[] = [];
      for (let k = 0; k < BATCH; k++) {
        // A random object moves up to 30 m (a vehicle at 15 m/s reporting every 2 s).
        const i = Math.floor(random() * TOTAL);
        const kind = KINDS[i % KINDS.length] as string;
        const step = metres(30);
        lons[i] = (lons[i] ?? 0) + (random() * 2 - 1) * step.lon;
        lats[i] = (lats[i] ?? 0) + (random() * 2 - 1) * step.lat;
        patches.push({
          id: `${kind}/${i}`,
          location: { longitude: lons[i] ?? 0, latitude: lats[i] ?? 0, time: isoAt(baseTime + TOTAL + start + k) },
        });
      }
      const t0 = performance.now();
      await store.objects.upsertMany(REALM, patches, isoAt(baseTime + TOTAL + start));
      updateMs += performance.now() - t0;
    }
    const updateRate = (UPDATES / updateMs) * 1000;
    log(`updates: ${Math.round(updateRate)} objects/s`);
    return { ingestRate, updateRate, searchableRate, indexLagMs };
  }
}

async function queries(store: SqliteStore, ingested: Ingested & { fileMb: number }): Promise<void> {
  const { ingestRate, updateRate, searchableRate, indexLagMs, fileMb } = ingested;
  {
    // --- 2. queries
    const rows: Row[] = [];
    const measure = async (name: string, what: string, target: number | null, run: () => Promise<number>): Promise<void> => {
      if (!chosen(name)) return;
      for (let i = 0; i < 20; i++) await run(); // warm-up
      const times: number[] = [];
      let returned = 0;
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        returned += await run();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const row: Row = {
        name,
        what,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
        mean: times.reduce((a, b) => a + b, 0) / times.length,
        returned: returned / RUNS,
        target,
      };
      rows.push(row);
      log(`  ${name}: p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, ${row.returned.toFixed(0)} objects`);
    };
    // As ObjectService calls the store: a projection (no location; data only for `fields`).
    const list = async (query: Omit<ObjectListQuery, 'limit'>): Promise<number> =>
      (await store.objects.list(REALM, { limit: LIMIT, fields: null, ...query })).items.length;
    const search = async (q: string): Promise<number> =>
      (await store.objects.search(REALM, { words: parseSearchQuery(q), limit: LIMIT, fields: null })).length;

    global.gc?.(); // the ingest's garbage, not the queries'
    log(`queries, ${RUNS} runs each`);
    await measure('circle, r = 1 km', 'random centre', 10, () => list({ shape: circle() }));
    await measure('rectangle 3.2 × 3.2 km', 'random centre', 10, () => list({ shape: rectangle() }));
    await measure('polygon, 50 vertices', 'concave star, radii 1.2–2.4 km', 10, () => list({ shape: polygon() }));
    await measure('filter only, common', '`active=true,speed>90`: about 22% match, spread over all ids', null, () =>
      list({ filter: parseFilter('active=true,speed>90', 100) }),
    );
    await measure('filter only, rare', '`fuel<0.01`: about 1% match', null, () => list({ filter: parseFilter('fuel<0.01', 100) }));
    await measure('combined', '`kind=van,active=true` + 5 km square + `fields=kind,speed`', 10, () => {
      const { lon, lat } = place();
      const half = metres(2500);
      return list({
        filter: parseFilter('kind=van,active=true', 100),
        shape: { w: lon - half.lon, e: lon + half.lon, s: lat - half.lat, n: lat + half.lat },
        fields: ['kind', 'speed'],
      });
    });
    // Surnames are Müller, Schmidt, … (10) and each with 19 suffixes (Müllerberg, …): a
    // suffixed one is the whole word of about 5,000 objects; a plain one is also the
    // prefix of its 19 variants, so `müller` matches about 100,000 objects.
    const suffixed = LAST.slice(10);
    await measure('search, two words', 'first name + surname, e.g. `anna müllerberg`: about 100 matches', 20, () =>
      search(`${pick(FIRST)} ${pick(suffixed)}`),
    );
    await measure('search, one word', 'a surname, e.g. `müllerberg`: about 5,000 matches, the best 1,000 returned', 20, () =>
      search(pick(suffixed)),
    );
    await measure('search, common prefix', '`müller`, `schmidt`, …: about 100,000 matches (every word starting so), the best 1,000', null, () =>
      search(pick(LAST.slice(0, 10))),
    );
    global.gc?.();
    const rssMb = process.memoryUsage().rss / 2 ** 20;

    // --- report
    const ms = (v: number): string => v.toFixed(2);
    const out: string[] = [];
    out.push('## Query engine (SQLite, 1,000,000 objects)');
    out.push('');
    out.push(`Produced by \`test/bench/query.bench.ts\`: ${TOTAL.toLocaleString('en-US')} objects in one realm, uniformly in a`);
    out.push('100 km × 100 km square (about 100 per km²), each with a label, a location with time and five data');
    out.push('fields; the store is used through its port (no HTTP). Queries run at random places, 200 times each');
    out.push('after 20 warm-up runs, with a page limit of 1,000.');
    out.push('');
    out.push('| Measure | Result | Target | Met |');
    out.push('|---|---|---|---|');
    out.push(
      `| Bulk ingest, new objects (batches of 10,000, each one committed transaction; WAL + synchronous=NORMAL: survives a process crash) | ${Math.round(ingestRate).toLocaleString('en-US')} objects/s | ≥ 100,000 objects/s | ${ingestRate >= 100_000 ? 'yes' : 'no'} |`,
    );
    out.push(
      `| Bulk ingest until searchable (the same, counting until the full-text index, written by its own thread, held every object: ${(indexLagMs / 1000).toFixed(1)} s after the last batch) | ${Math.round(searchableRate).toLocaleString('en-US')} objects/s | — | — |`,
      `| Location updates of existing objects (batches of 10,000, random objects each moving up to 30 m; each update also moves the replaced fix to history) | ${Math.round(updateRate).toLocaleString('en-US')} objects/s | — | — |`,
    );
    for (const row of rows) {
      const met = row.target === null ? '—' : row.p99 <= row.target ? 'yes' : 'no';
      out.push(
        `| ${row.name} (${row.what}; ${row.returned.toFixed(0)} objects on average) | p50 ${ms(row.p50)} ms, p99 ${ms(row.p99)} ms | ${row.target === null ? '—' : `p99 ≤ ${row.target} ms`} | ${met} |`,
      );
    }
    out.push(
      `| RSS after ingest and queries (includes the database pages read through the 1 GiB memory map, which are the OS page cache) | ${rssMb.toFixed(0)} MiB | — | — |`,
    );
    out.push(`| Database and search files (with WALs) | ${fileMb.toFixed(0)} MiB | — | — |`);
    out.push('');
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

await main();
