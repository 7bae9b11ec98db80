// The capacity model of docs/performance.md ("Capacity model"): devices × report interval →
// API processes, MongoDB shards and NATS traffic, from named inputs. Prints the worked table
// as markdown. Change an input with name=value arguments, for example after a new bench run:
//   node scripts/capacity-model.mjs apiCpuUs=30 shardUpdatesPerS=20000
// The defaults and where each comes from are listed in docs/performance.md.
const inputs = {
  /** Server CPU per update of an API process on the MongoDB adapter, fleet path (µs). */
  apiCpuUs: 150,
  /** Target utilisation of an API process's core. */
  apiUtilisation: 0.6,
  /** Sustained locus updates per second one shard's primary takes (object update + history upsert each). */
  shardUpdatesPerS: 15000,
  /** Target utilisation of a shard. */
  shardUtilisation: 0.5,
  /** Data one shard holds at most (bytes; history dominates). */
  shardStorageBytes: 2e12,
  /** CPU an API process spends per event it receives from NATS for its local subscribers (µs). */
  eventCpuUs: 13.8,
  /** Bytes of one update's change record on NATS (object before and after, fix, time). */
  eventBytes: 600,
  /** API processes with a subscriber of the realm (each gets every event of the realm). */
  subscribedProcesses: 2,
  /** History stored per update (document and its two index entries, bytes). */
  historyBytes: 400,
  /** Days of history kept (realm setting historyRetentionDays). */
  retentionDays: 30,
};
for (const arg of process.argv.slice(2)) {
  const [name, value] = arg.split('=');
  if (!(name in inputs) || value === undefined || !Number.isFinite(Number(value))) {
    console.error(`unknown input or bad value: ${arg} (inputs: ${Object.keys(inputs).join(', ')})`);
    process.exit(2);
  }
  inputs[name] = Number(value);
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const bytes = (n) => (n >= 1e12 ? `${(n / 1e12).toFixed(1)} TB` : n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : `${(n / 1e6).toFixed(1)} MB`);
const lines = [
  `Inputs: ${Object.entries(inputs)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}`,
  '',
  '| Devices | Report interval | Updates/s U | API processes (writes) | Event CPU per subscribed process | MongoDB shards (for writes / for history) | NATS out | History stored |',
  '|---|---|---|---|---|---|---|---|',
];
for (const devices of [10_000, 100_000, 1_000_000]) {
  for (const interval of [1, 10, 60]) {
    const u = devices / interval;
    const api = Math.max(1, Math.ceil((u * inputs.apiCpuUs) / (inputs.apiUtilisation * 1e6)));
    const writeShards = Math.max(1, Math.ceil(u / (inputs.shardUtilisation * inputs.shardUpdatesPerS)));
    // Every subscribed process receives every event of the realm, however many processes write.
    const eventCore = (u * inputs.eventCpuUs) / 1e6;
    const nats = u * inputs.eventBytes * inputs.subscribedProcesses;
    const history = u * 86_400 * inputs.retentionDays * inputs.historyBytes;
    const storageShards = Math.max(1, Math.ceil(history / inputs.shardStorageBytes));
    lines.push(
      `| ${fmt(devices)} | ${interval} s | ${fmt(u)} | ${api} | ${(eventCore * 100).toFixed(0)}% of a core${eventCore > inputs.apiUtilisation ? ' (over target: split the realm\'s subscribers)' : ''} | ${Math.max(writeShards, storageShards)} (${writeShards} / ${storageShards}) | ${bytes(nats)}/s | ${bytes(history)} |`,
    );
  }
}
console.log(lines.join('\n'));
