/**
 * `npm run bench`: Hivekit subscriptions end to end, over WebSockets, against the real server
 * in a child process (test/support/bench-server.ts). 1,000 subscriptions (shapes, conditions,
 * whole-realm with a condition, targets: the mix of subscriptions.bench.ts) on 100 WebSocket
 * connections; 10,000 objects; one writer connection sends 10,000 updates/s as frames of 100
 * `obj set` every 10 ms. The send time travels as the fix's altitude; every `cre`/`upd`
 * record is timed when its frame arrives (same clock, this process). Target: p99 ≤ 50 ms
 * beyond the push cycle (20 ms). The first second is not counted.
 *
 * Needs the Hivekit envelope and `sub cre` served (HandlerDeps.live wired in server.ts);
 * until then it prints that it was skipped.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { startBenchServer, stopBenchServer, type BenchServer } from '../support/bench-server.js';
import { wsUrl } from '../support/v1-clients.js';
import { benchRequest } from '../support/bench-http.js';

const adminToken = 'bench-admin-token-0123456789';
const realm = 'bench';
const objectCount = 10_000;
/** LOCUS_BENCH_LIVE_CONNECTIONS: fewer subscriber connections (10 subscriptions each), to find where time goes. */
const connections = Number(process.env.LOCUS_BENCH_LIVE_CONNECTIONS ?? 100);
const perConnection = 10;
const rate = 10_000;
const batch = 100;
const warmupMs = 1000;
const measureMs = Number(process.env.LOCUS_BENCH_LIVE_MS ?? 5000);
const cycleMs = 20;
const west = 13;
const south = 52;
const width = 1;
const height = 0.8;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};
const now = (): number => performance.timeOrigin + performance.now();

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function optionsOf(k: number, rnd: () => number): Record<string, unknown> {
  const lon = west + rnd() * width;
  const lat = south + rnd() * height;
  const kind = k % 20;
  if (kind < 8) return { typ: 'obj', sty: 'cir', sha: { cx: lon, cy: lat, r: 300 + rnd() * 2700 } };
  if (kind < 11) {
    const w = 0.01 + rnd() * 0.04;
    return { typ: 'obj', sty: 'rec', sha: { x1: lon, y1: lat, x2: lon + w, y2: lat + w * 0.6 } };
  }
  if (kind < 13) {
    const d = 0.01 + rnd() * 0.03;
    return { typ: 'obj', sty: 'pol', sha: { points: [{ x: lon, y: lat }, { x: lon + d, y: lat }, { x: lon + d / 2, y: lat + d }] } };
  }
  if (kind < 17) return { typ: 'obj', sty: 'cir', sha: { cx: lon, cy: lat, r: 1000 + rnd() * 4000 }, atr: [k % 2 === 0 ? 'type="car"' : 'charge>0.5'] };
  if (kind < 18) return { typ: 'obj', sty: 'rea', atr: [`team="t${k % 97}"`] };
  return { typ: 'obj', sty: 'tar', sta: { id: `obj-${Math.floor(rnd() * objectCount)}`, r: 2000 } };
}

type Frame = Record<string, unknown>[];

/** A WebSocket that signs in and answers requests by cid; pushes go to `onPush`. */
class Socket {
  private readonly waiting = new Map<string, (reply: Record<string, unknown>) => void>();
  onPush: (frame: Frame, arrived: number) => void = () => undefined;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const arrived = now();
      const frame = JSON.parse(data.toString('utf8')) as Frame;
      let pushes = false;
      for (const message of frame) {
        const cid = message.cid;
        if (typeof cid === 'string') this.waiting.get(cid)?.(message);
        else if (message.act === 'aut') this.waiting.get('aut')?.(message);
        else pushes = true;
      }
      if (pushes) this.onPush(frame, arrived);
    });
  }

  static async open(url: string, token: string): Promise<Socket> {
    const ws = new WebSocket(wsUrl(url), { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const socket = new Socket(ws);
    const signedIn = socket.expect('aut');
    ws.send(`Bearer ${token}`);
    const reply = await signedIn;
    if (reply.res !== 'suc') throw new Error(`sign-in failed: ${JSON.stringify(reply)}`);
    return socket;
  }

  private expect(cid: string): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.waiting.set(cid, (reply) => {
        this.waiting.delete(cid);
        resolve(reply);
      });
    });
  }

  send(messages: object[]): void {
    this.ws.send(JSON.stringify(messages));
  }

  async call(message: Record<string, unknown> & { cid: string }): Promise<Record<string, unknown>> {
    const reply = this.expect(message.cid);
    this.send([message]);
    return reply;
  }

  close(): void {
    this.ws.close(1000);
  }
}

async function admin(server: BenchServer, method: string, path: string, body?: unknown): Promise<unknown> {
  return benchRequest(server.httpUrl, adminToken, method, path, body);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function main(): Promise<void> {
  const server = await startBenchServer({
    adminToken,
    env: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000', LOCUS_MAX_CONNECTIONS: String(connections + 50) },
    // As in protocol.bench.ts: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where the server's time goes.
    args: (process.env.LOCUS_BENCH_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  });
  const sockets: Socket[] = [];
  try {
    await admin(server, 'PUT', `/admin/v1/realm/${realm}`, {});
    const { token } = (await admin(server, 'POST', `/admin/v1/realm/${realm}/token`, { scope: 'write' })) as { token: string };
    const writer = await Socket.open(server.httpUrl, token);
    sockets.push(writer);
    // An older envelope answers without the cid (or not at all): give it 2 s.
    const probe = await Promise.race([
      writer.call({ typ: 'sub', act: 'cre', id: 'probe', rea: realm, dat: { typ: 'are' }, cid: 'probe' }),
      new Promise<Record<string, unknown>>((resolve) => setTimeout(() => resolve({ res: 'err', err: 'no reply' }), 2000)),
    ]);
    if (probe.res !== 'suc') {
      process.stdout.write(
        `## Hivekit subscriptions over WebSocket\n\nSkipped: this build does not serve \`sub\` \`cre\` yet (${String(probe.err)}); subscriptions.bench.ts measures the engine.\n`,
      );
      return;
    }
    const rnd = random(7);
    const positions = Array.from({ length: objectCount }, () => [west + rnd() * width, south + rnd() * height] as [number, number]);
    const dataOf = (i: number): Record<string, string | number> => ({ type: i % 3 === 0 ? 'car' : 'bike', team: `t${i % 97}`, charge: Math.round(rnd() * 100) / 100 });
    for (let start = 0; start < objectCount; start += 1000) {
      writer.send(positions.slice(start, start + 1000).map(([lon, lat], j) => ({ typ: 'obj', act: 'set', id: `obj-${start + j}`, rea: realm, loc: { lon, lat, alt: 0 }, dat: dataOf(start + j) })));
    }
    await writer.call({ typ: 'obj', act: 'rea', id: `obj-${objectCount - 1}`, rea: realm, cid: 'loaded' });

    let measuredFrom = Number.POSITIVE_INFINITY;
    const samples: number[] = [];
    let pushes = 0;
    let frames = 0;
    const onPush = (frame: Frame, arrived: number): void => {
      frames++;
      for (const message of frame) {
        if (message.typ !== 'sub') continue;
        pushes++;
        if (String(message.id).startsWith('tar-')) continue;
        const obj = message.obj as Record<string, Record<string, { loc: { alt: number } }> | undefined> | undefined;
        if (obj === undefined) continue;
        for (const map of [obj.cre, obj.upd]) {
          if (map === undefined) continue;
          for (const id in map) {
            const sent = (map[id] as { loc: { alt: number } }).loc.alt;
            if (sent >= measuredFrom) samples.push(arrived - sent);
          }
        }
      }
    };
    log(`creating ${connections * perConnection} subscriptions on ${connections} WebSocket connections`);
    const subRnd = random(11);
    for (let c = 0; c < connections; c++) {
      const socket = await Socket.open(server.httpUrl, token);
      sockets.push(socket);
      socket.onPush = onPush;
      const replies = [];
      for (let s = 0; s < perConnection; s++) {
        const k = c * perConnection + s;
        const dat = optionsOf(k, subRnd);
        replies.push(socket.call({ typ: 'sub', act: 'cre', id: `${dat.sty === 'tar' ? 'tar' : 'sub'}-${k}`, rea: realm, dat, cid: `s${k}` }));
      }
      for (const reply of await Promise.all(replies)) if (reply.res !== 'suc') throw new Error(`sub cre failed: ${JSON.stringify(reply)}`);
    }
    const move = random(99);
    const interval = (1000 * batch) / rate;
    const started = now();
    measuredFrom = started + warmupMs;
    let sent = 0;
    log(`writing ${rate} updates/s for ${(warmupMs + measureMs) / 1000} s (the first ${warmupMs / 1000} s not counted)`);
    for (let k = 0; now() < measuredFrom + measureMs; k++) {
      const wait = started + k * interval - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const sentAt = now();
      const messages = [];
      for (let i = 0; i < batch; i++) {
        const n = Math.floor(move() * objectCount);
        const p = positions[n] as [number, number];
        p[0] = Math.min(west + width, Math.max(west, p[0] + (move() - 0.5) * 0.004));
        p[1] = Math.min(south + height, Math.max(south, p[1] + (move() - 0.5) * 0.003));
        messages.push({ typ: 'obj', act: 'set', id: `obj-${n}`, rea: realm, loc: { lon: p[0], lat: p[1], alt: sentAt } });
      }
      writer.send(messages);
      if (sentAt >= measuredFrom) sent += batch;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    samples.sort((a, b) => a - b);
    const p99 = percentile(samples, 99);
    const lines = [
      '## Hivekit subscriptions over WebSocket',
      '',
      `${connections * perConnection} subscriptions on ${connections} WebSocket connections (the mix of the in-process part), ${objectCount.toLocaleString('en-US')} objects, ` +
        `${rate.toLocaleString('en-US')} updates/s as frames of ${batch} \`obj set\` every ${interval} ms on one more connection; latency from the send to the arrival of the push frame ` +
        `(push cycle ${cycleMs} ms).`,
      '',
      '| Measure | Value | Target |',
      '|---|---|---|',
      `| updates sent (measured ${measureMs / 1000} s) | ${sent.toLocaleString('en-US')} | |`,
      `| records received and timed (cre/upd) | ${samples.length.toLocaleString('en-US')} | |`,
      `| push messages / frames | ${pushes.toLocaleString('en-US')} / ${frames.toLocaleString('en-US')} | |`,
      `| latency p50 | ${percentile(samples, 50).toFixed(1)} ms | |`,
      `| latency p99 | ${p99.toFixed(1)} ms | |`,
      `| p99 beyond the ${cycleMs} ms cycle | ${(p99 - cycleMs).toFixed(1)} ms | ≤ 50 ms ${p99 - cycleMs <= 50 ? '(met)' : '(NOT met)'} |`,
      `| latency max | ${(samples.at(-1) ?? Number.NaN).toFixed(1)} ms | |`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const socket of sockets) socket.close();
    await stopBenchServer(server);
  }
}

await main();
