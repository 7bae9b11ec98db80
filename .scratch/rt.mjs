import Database from 'better-sqlite3';
const db = new Database(':memory:');
const mode = process.env.MODE;
if (mode === '2d') db.exec('CREATE VIRTUAL TABLE t USING rtree(id, x0, x1, y0, y1)');
else db.exec('CREATE VIRTUAL TABLE t USING rtree(id, k0, k1, x0, x1, y0, y1)');
const ins = mode === '2d' ? db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?)') : db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)');
let r = 1; const rnd = () => { r = (r * 16807) % 2147483647; return r / 2147483647; };
const N = 200000;
let t = performance.now();
db.exec('BEGIN');
for (let i = 1; i <= N; i++) { const x = 13 + rnd(), y = 52 + rnd(); if (mode === '2d') ins.run(i, x, x, y, y); else ins.run(i, 1, mode === 'half' ? 1.5 : 1, x, x, y, y); }
db.exec('COMMIT');
const insMs = performance.now() - t;
const q = mode === '2d' ? db.prepare('SELECT count(*) n FROM t WHERE x1 >= ? AND x0 <= ? AND y1 >= ? AND y0 <= ?') : db.prepare('SELECT count(*) n FROM t WHERE k0 <= 1 AND k1 >= 1 AND x1 >= ? AND x0 <= ? AND y1 >= ? AND y0 <= ?');
t = performance.now(); let n = 0;
for (let i = 0; i < 1000; i++) { const x = 13 + rnd() * 0.95, y = 52 + rnd() * 0.95; n += q.get(x, x + 0.03, y, y + 0.03).n; }
console.log(mode, 'insert µs/row', (insMs * 1000 / N).toFixed(1), 'query µs', ((performance.now() - t)).toFixed(1), 'avg hits', n / 1000);
