import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2];
const file = readdirSync(dir).filter(f => f.endsWith('.cpuprofile')).map(f => dir + '/' + f)[0];
const p = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map(); const byId = new Map(p.nodes.map(n => [n.id, n]));
const dt = p.timeDeltas; const counts = new Map();
for (let i = 0; i < p.samples.length; i++) counts.set(p.samples[i], (counts.get(p.samples[i]) ?? 0) + (dt[i] ?? 0));
let total = 0;
for (const [id, t] of counts) { const n = byId.get(id); const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(key, (self.get(key) ?? 0) + t); total += t; }
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1000).toFixed(0).padStart(7), 'ms', (100 * v / total).toFixed(1).padStart(5), '%', k);
