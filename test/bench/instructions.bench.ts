/**
 * `npm run bench`: instructions under load, end to end (issue #31). A server process (as
 * `npm start` runs it, SQLite) holds a realm of 100,000 objects and 100 areas; 10,000 updates/s
 * arrive as v1 frames of 100 `obj upd` over TCP every 10 ms, each moving a scooter and changing
 * its charge.
 *
 * Phase 1 runs the load with no instruction; phase 2 with 1,000 instructions of every kind the
 * index serves (object conditions, `within` pairs, areas containing objects, objects inside
 * areas), none of which the scooters' writes can affect, plus one probe instruction
 * (`when object(probe="yes") then sendToUrl(<local receiver>)`). The figures: the server's CPU
 * time per update in each phase (/proc/<pid>/stat) and the difference, and the time from sending a
 * probe write (20 per second during phase 2) to its `then` request arriving at the receiver.
 * Targets: ≤ 5 µs extra CPU per update; `then` p99 ≤ 50 ms. The periodic repair (a rescan of every
 * instruction over the realm) is set to an hour so that it does not land in a measured phase: its
 * cost is per period, not per update. LOCUS_BENCH_PROFILE=<dir> writes the server's CPU profile there.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { benchRealm, benchRequest } from '../support/bench-http.js';
import { mulberry32 } from '../support/bench-random.js';
import { connectTcp } from '../support/v1-clients.js';
import { benchAdminToken, startBenchServer, stopBenchServer } from '../support/bench-server.js';
import { ms, percentile, processUse, usePerOperation } from '../support/bench-stats.js';

const objectCount = 100_000;
const areaCount = 100;
const instructionCount = 1000;
const rate = 10_000;
const batch = 100;
const measureMs = Number(process.env.LOCUS_BENCH_INSTRUCTIONS_MS ?? 5000);
const probeEveryMs = 50;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};
const now = (): number => performance.timeOrigin + performance.now();

function source(i: number): string {
  switch (i % 4) {
    case 0:
      return `when object(type="kind-${i}", charge<10) then set("flag", "on")`;
    case 1:
      return `when object(type="van-${i}").within(200, type="depot-${i}") then set("near", "yes")`;
    case 2:
      return `when area(zone="zone-${i % areaCount}").containing(fleet="fleet-${i}") then set("busy", "yes")`;
    default:
      return `when object(type="tram-${i}").inside(zone="zone-${i % areaCount}") then set("inside", "yes")`;
  }
}

async function main(): Promise<void> {
  const arrivals = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = now();
      for (const entry of JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }[]) arrivals.set(entry.id, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/then`;

  const server = await startBenchServer({
    adminToken: benchAdminToken,
    args: process.env.LOCUS_BENCH_PROFILE === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.LOCUS_BENCH_PROFILE}`],
    env: { LOCUS_RATE_LIMIT: '100000000', LOCUS_RATE_BURST: '100000000', LOCUS_SEND_TO_URL_ALLOW: '127.0.0.1', LOCUS_MAX_BULK: '10000', LOCUS_INSTRUCTION_MAX_PER_REALM: '2000', LOCUS_INSTRUCTION_REPAIR_MS: '3600000' },
  });
  const pid = server.child.pid;
  try {
    const rnd = mulberry32(31);
    const areas = Array.from({ length: areaCount }, (_, i) => ({
      id: `zone-${i}`,
      shape: { cx: 13 + rnd(), cy: 52 + rnd() * 0.8, r: 500 },
    }));
    const token = await benchRealm(server.httpUrl, benchAdminToken, 'ins', []);
    for (const area of areas) {
      await benchRequest(server.httpUrl, token, 'POST', `/v2/realm/ins/area/${area.id}`, { label: area.id, shape: area.shape, data: { zone: area.id } });
    }
    const positions = Array.from({ length: objectCount }, () => [13 + rnd(), 52 + rnd() * 0.8] as [number, number]);
    const started = now();
    for (let from = 0; from < objectCount; from += 5000) {
      const objects = positions.slice(from, from + 5000).map(([longitude, latitude], k) => ({
        id: `s${from + k}`,
        location: { longitude, latitude },
        data: { type: 'scooter', fleet: 'city', charge: (from + k) % 100 },
      }));
      await benchRequest(server.httpUrl, token, 'POST', '/v2/realm/ins/object', { objects });
    }
    log(`${objectCount} objects in ${((now() - started) / 1000).toFixed(1)} s`);

    // The updates come as devices send them: v1 `obj upd` frames over TCP, each update answered.
    const client = await connectTcp(server.tcpPort, token);
    let sequence = 0;
    /** Sends `rate` updates/s for measureMs; returns the updates sent. */
    async function load(during?: (elapsed: number) => void): Promise<number> {
      const t0 = now();
      let sent = 0;
      for (let tick = 0; ; tick++) {
        const due = t0 + tick * ((batch * 1000) / rate);
        const elapsed = now() - t0;
        if (elapsed >= measureMs) break;
        if (due > now()) await new Promise((resolve) => setTimeout(resolve, due - now()));
        const frame = Array.from({ length: batch }, () => {
          const i = Math.floor(rnd() * objectCount);
          const p = positions[i]!;
          p[0] = Math.min(14, Math.max(13, p[0] + (rnd() - 0.5) * 1e-3));
          p[1] = Math.min(52.8, Math.max(52, p[1] + (rnd() - 0.5) * 1e-3));
          sequence++;
          return { typ: 'obj', act: 'upd', cid: `u${sequence}`, id: `s${i}`, rea: 'ins', loc: { lon: p[0], lat: p[1] }, dat: { charge: sequence % 100 } };
        });
        client.sendText(JSON.stringify(frame));
        sent += batch;
        during?.(now() - t0);
      }
      // Every update answered, and all of them with success.
      const answered = (): number => client.log.reduce((n: number, frame: unknown) => n + (Array.isArray(frame) ? frame.length : 0), 0);
      const waitFrom = now();
      while (answered() < sent && now() - waitFrom < 60_000) await new Promise((resolve) => setTimeout(resolve, 20));
      const replies = client.log.splice(0).flat() as { res?: string; err?: string }[];
      const failed = replies.find((reply) => reply.res !== 'suc');
      if (replies.length < sent || failed !== undefined) throw new Error(`${replies.length} of ${sent} updates answered; ${JSON.stringify(failed)}`);
      return sent;
    }

    // Phase 1: no instructions.
    await load();
    let before = processUse(pid);
    const baseUpdates = await load();
    const base = usePerOperation(before, processUse(pid), baseUpdates);
    log(`no instructions: ${base.cpuUs.toFixed(1)} µs per update`);

    // Phase 2: 1,000 instructions that the writes do not touch, and the probe.
    const t1 = now();
    for (let i = 0; i < instructionCount; i++) {
      await benchRequest(server.httpUrl, token, 'POST', `/v2/realm/ins/instruction/i${i}`, { label: `i${i}`, instruction: source(i) });
    }
    await benchRequest(server.httpUrl, token, 'POST', '/v2/realm/ins/instruction/probe', {
      label: 'probe',
      instruction: `when object(probe="yes") then sendToUrl("${receiverUrl}")`,
    });
    log(`${instructionCount + 1} instructions created in ${((now() - t1) / 1000).toFixed(1)} s`);
    // The engine has them all once a probe goes round.
    const warm = now();
    await benchRequest(server.httpUrl, token, 'POST', '/v2/realm/ins/object/warm', { data: { probe: 'yes' } });
    while (!arrivals.has('warm')) {
      if (now() - warm > 120_000) throw new Error('the probe instruction never fired');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await load();
    const sentAt = new Map<string, number>();
    /** How long each probe write took to be answered (the write path alone, under the same load). */
    const acked: number[] = [];
    let probes = 0;
    let nextProbe = 0;
    before = processUse(pid);
    const insUpdates = await load((elapsed) => {
      while (elapsed >= nextProbe) {
        nextProbe += probeEveryMs;
        const id = `probe-${probes++}`;
        const at = now();
        sentAt.set(id, at);
        void benchRequest(server.httpUrl, token, 'POST', `/v2/realm/ins/object/${id}`, { data: { probe: 'yes' } }).then(() => acked.push(now() - at));
      }
    });
    const withIns = usePerOperation(before, processUse(pid), insUpdates);
    await client.close();
    const settle = now();
    while ([...sentAt.keys()].some((id) => !arrivals.has(id)) && now() - settle < 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
    const latencies = [...sentAt].map(([id, at]) => (arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
    const acks = [...acked].sort((a, b) => a - b);
    const missing = latencies.filter((l) => !Number.isFinite(l)).length;
    const extra = withIns.cpuUs - base.cpuUs;
    const p99 = percentile(latencies, 99);
    log(`with instructions: ${withIns.cpuUs.toFixed(1)} µs per update; then p99 ${ms(p99)}`);

    const lines = [
      '## Instructions (`test/bench/instructions.bench.ts`)',
      '',
      `A server process (SQLite) with ${objectCount.toLocaleString('en-US')} objects and ${areaCount} areas; ${rate.toLocaleString('en-US')} updates/s`,
      `as v1 frames of ${batch} \`obj upd\` over TCP (each moves a scooter and changes its charge), ${measureMs / 1000} s per phase. Phase 2 adds`,
      `${instructionCount.toLocaleString('en-US')} instructions (object conditions, \`within\` pairs, areas containing objects, objects inside areas)`,
      'that these writes cannot affect, and a probe instruction whose `then` is a `sendToUrl` to a local receiver;',
      `a probe write every ${probeEveryMs} ms is timed from sending to its request's arrival.`,
      '',
      '| Figure | Value | Target | Met |',
      '|---|---|---|---|',
      `| Server CPU per update, no instructions | ${base.cpuUs.toFixed(1)} µs | | |`,
      `| Server CPU per update, ${instructionCount.toLocaleString('en-US')} instructions | ${withIns.cpuUs.toFixed(1)} µs | | |`,
      `| Extra CPU per update | ${extra.toFixed(1)} µs | ≤ 5 µs | ${extra <= 5 ? 'yes' : 'no'} |`,
      `| Probe write answered p50 / p99 (the write path alone) | ${ms(percentile(acks, 50))} / ${ms(percentile(acks, 99))} | | |`,
      `| Write → \`then\` p50 / p99 (${latencies.length} probes${missing > 0 ? `, ${missing} never fired` : ''}) | ${ms(percentile(latencies, 50))} / ${ms(p99)} | p99 ≤ 50 ms | ${p99 <= 50 && missing === 0 ? 'yes' : 'no'} |`,
      '',
      'The CPU figures are read from /proc in clock ticks of 10 ms over the whole phase. The periodic repair',
      '(`LOCUS_INSTRUCTION_REPAIR_MS`, a rescan of every instruction over the realm) is off during the run: it',
      'costs per period, not per update.',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await stopBenchServer(server);
    receiver.close();
  }
}

await main();
