// Ingest micro-benchmark: variants toggled by env.
import { openSqliteStore } from '../dist/internal/store/sqlite/sqlite-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
const N = Number(process.env.N ?? 100000);
const dir = mkdtempSync(join(tmpdir(), 'ing-'));
const path = join(dir, 'x.db');
const store = openSqliteStore(path);
const db = store['db'];
if (process.env.NO_RTREE) db.exec('DROP TRIGGER objects_rtree_insert');
if (process.env.NO_FTS) db.exec("DROP TABLE object_fts; CREATE TABLE object_fts(rowid INTEGER PRIMARY KEY, names, terms); DROP TRIGGER objects_index_delete;");
if (process.env.NO_FTS_REAL) db.exec("DROP TABLE object_fts; CREATE TEMP TABLE object_fts(rowid INTEGER PRIMARY KEY, names, terms); DROP TRIGGER objects_index_delete;");
if (process.env.CACHE) db.pragma(`cache_size = ${process.env.CACHE}`);
if (process.env.SYNC) db.pragma(`synchronous = ${process.env.SYNC}`);
if (process.env.WALCP) db.pragma(`wal_autocheckpoint = ${process.env.WALCP}`);
let r = 1;
const rnd = () => { r = (r * 16807) % 2147483647; return r / 2147483647; };
const K = ['truck','van','car','bike'];
let ms = 0;
for (let s = 0; s < N; s += 10000) {
  const p = [];
  for (let i = s; i < s + 10000; i++) p.push({ id: `${K[i%4]}/${i}`, label: `Truck ${i}`, location: { longitude: 13 + rnd(), latitude: 52 + rnd(), speed: 3, time: new Date(1e12 + i).toISOString() }, data: { kind: K[i%4], speed: Math.floor(rnd()*120), fuel: 0.5, driver: 'Anna Müller', active: true } });
  const t = performance.now();
  await store.objects.upsertMany('bench', p, new Date(1e12 + s).toISOString());
  ms += performance.now() - t;
}
console.log(JSON.stringify({ env: Object.keys(process.env).filter(k => ['NO_RTREE','NO_FTS','NO_FTS_REAL','CACHE','SYNC','WALCP'].includes(k)), rate: Math.round(N / ms * 1000) }));
await store.close();
rmSync(dir, { recursive: true, force: true });
