import { openSqliteStore } from '../dist/internal/store/sqlite/sqlite-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const N = Number(process.env.N ?? 100000);
const dir = mkdtempSync(join(tmpdir(), 'ing-'));
const store = openSqliteStore(join(dir, 'x.db'));
const db = store['db'];
if (process.env.NO_RTREE) db.exec('DROP TRIGGER objects_rtree_insert');
if (process.env.CACHE) db.pragma(`cache_size = ${process.env.CACHE}`);
db.prepare("INSERT INTO realm_keys (realm) VALUES ('bench')").run();
const ins = db.prepare('INSERT INTO objects (realm, id, label, lon, lat, location, loc_time, seen, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
const fix = db.prepare('INSERT OR REPLACE INTO history (realm, object_id, time, location) VALUES (?, ?, ?, ?)');
const fts = db.prepare('INSERT INTO object_fts (rowid, names, terms) VALUES (?, ?, ?)');
const sel = db.prepare("SELECT rowid, id, label, location, seen, data FROM objects WHERE realm = ? AND id IN (SELECT value FROM json_each(?))");
const t = { sel: 0, ins: 0, fix: 0, fts: 0, commit: 0 };
let r = 1; const rnd = () => { r = (r * 16807) % 2147483647; return r / 2147483647; };
const K = ['truck','van','car','bike'];
for (let s = 0; s < N; s += 10000) {
  const rows = [];
  for (let i = s; i < s + 10000; i++) rows.push({ id: `${K[i%4]}/${i}`, loc: JSON.stringify({ longitude: 13 + rnd(), latitude: 52 + rnd(), speed: 3, time: new Date(1e12 + i).toISOString() }), data: JSON.stringify({ kind: K[i%4], speed: Math.floor(rnd()*120), fuel: 0.5, driver: 'Anna Müller', active: true }), time: new Date(1e12 + i).toISOString() });
  db.exec('BEGIN');
  let a = performance.now();
  sel.all('bench', JSON.stringify(rows.map(r => r.id)));
  let b = performance.now(); t.sel += b - a;
  for (const row of rows) {
    a = performance.now();
    fix.run('bench', row.id, row.time, row.loc);
    b = performance.now(); t.fix += b - a;
    const { lastInsertRowid } = ins.run('bench', row.id, `Truck ${row.id}`, 13 + rnd(), 52 + rnd(), row.loc, row.time, row.time, row.data);
    a = performance.now(); t.ins += a - b;
    fts.run(lastInsertRowid, `1xtruck 1x${row.id.replace('/', ' 1x')}`, '1xvan 1x57 1x0 1x5 1xanna 1xmuller');
    b = performance.now(); t.fts += b - a;
  }
  a = performance.now();
  db.exec('COMMIT');
  t.commit += performance.now() - a;
}
const total = Object.values(t).reduce((x, y) => x + y);
console.log(JSON.stringify(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)]))), 'rate', Math.round(N / total * 1000));
await store.close(); rmSync(dir, { recursive: true, force: true });
