import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
const path = '/tmp/rt2.db'; for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
const db = new Database(process.env.MEM ? ':memory:' : path);
if (process.env.PAGE) db.pragma('page_size = ' + process.env.PAGE);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL');
if (process.env.CACHE) db.pragma('cache_size = ' + process.env.CACHE);
db.exec('CREATE VIRTUAL TABLE t USING rtree(id, k0, k1, x0, x1, y0, y1)');
const ins = db.prepare('INSERT INTO t VALUES (?, 1, 1.5, ?, ?, ?, ?)');
const bulk = db.prepare("INSERT INTO t SELECT j.value->>0, 1, 1.5, j.value->>1, j.value->>1, j.value->>2, j.value->>2 FROM json_each(?) j");
let r = 1; const rnd = () => { r = (r * 16807) % 2147483647; return r / 2147483647; };
const N = Number(process.env.N ?? 300000), B = 10000;
const mode = process.env.MODE ?? 'single';
let id = 0; const t = performance.now();
for (let s = 0; s < N; s += B) {
  let rows = []; for (let i = 0; i < B; i++) rows.push([++id, 13 + rnd(), 52 + rnd()]);
  if (mode.includes('sorted')) { const m = ([, x, y]) => { let xi = Math.floor((x - 13) * 65535), yi = Math.floor((y - 52) * 65535), z = 0; for (let b = 15; b >= 0; b--) z = z * 4 + (((xi >> b) & 1) << 1 | ((yi >> b) & 1)); return z; }; rows = rows.map(r => [m(r), r]).sort((a, b) => a[0] - b[0]).map(a => a[1]); }
  db.exec('BEGIN');
  if (mode.startsWith('bulk')) bulk.run(JSON.stringify(rows)); else for (const [i, x, y] of rows) ins.run(i, x, x, y, y);
  db.exec('COMMIT');
}
console.log(mode, process.env.MEM ? 'mem' : 'file', 'µs/row', ((performance.now() - t) * 1000 / N).toFixed(2));
