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
import WebSocket from 'ws';
import { benchAdminToken as adminToken, startBenchServer, stopBenchServer } from '../support/bench-server.js';
import { wsUrl } from '../support/v1-clients.js';
import { benchRealm } from '../support/bench-http.js';
import { now, paced } from '../support/bench-clock.js';
import { mulberry32 } from '../support/bench-random.js';
import { moveOne, objectData, startPositions, subscriptionOptions, timeRecords, type PushedObjects } from '../support/bench-live-workload.js';
import { percentile } from '../support/bench-stats.js';

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

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

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

async function main(): Promise<void> {
  const server = await startBenchServer({
    adminToken,
    env: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000', LOCUS_MAX_CONNECTIONS: String(connections + 50) },
    // As in protocol.bench.ts: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where the server's time goes.
    args: (process.env.LOCUS_BENCH_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  });
  const sockets: Socket[] = [];
  try {
    const token = await benchRealm(server.httpUrl, adminToken, realm);
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
    const rnd = mulberry32(7);
    const positions = startPositions(objectCount, rnd);
    const dataOf = (i: number): Record<string, string | number> => objectData(i, rnd);
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
        const obj = message.obj as PushedObjects | undefined;
        if (obj !== undefined) timeRecords(obj, arrived, measuredFrom, samples);
      }
    };
    log(`creating ${connections * perConnection} subscriptions on ${connections} WebSocket connections`);
    const subRnd = mulberry32(11);
    for (let c = 0; c < connections; c++) {
      const socket = await Socket.open(server.httpUrl, token);
      sockets.push(socket);
      socket.onPush = onPush;
      const replies = [];
      for (let s = 0; s < perConnection; s++) {
        const k = c * perConnection + s;
        const dat = subscriptionOptions(k, subRnd, objectCount);
        replies.push(socket.call({ typ: 'sub', act: 'cre', id: `${dat.sty === 'tar' ? 'tar' : 'sub'}-${k}`, rea: realm, dat, cid: `s${k}` }));
      }
      for (const reply of await Promise.all(replies)) if (reply.res !== 'suc') throw new Error(`sub cre failed: ${JSON.stringify(reply)}`);
    }
    const move = mulberry32(99);
    const interval = (1000 * batch) / rate;
    const started = now();
    measuredFrom = started + warmupMs;
    let sent = 0;
    log(`writing ${rate} updates/s for ${(warmupMs + measureMs) / 1000} s (the first ${warmupMs / 1000} s not counted)`);
    await paced(now, started, interval, measuredFrom + measureMs, (_k, sentAt) => {
      const messages = [];
      for (let i = 0; i < batch; i++) {
        const n = moveOne(positions, move);
        const p = positions[n] as [number, number];
        messages.push({ typ: 'obj', act: 'set', id: `obj-${n}`, rea: realm, loc: { lon: p[0], lat: p[1], alt: sentAt } });
      }
      writer.send(messages);
      if (sentAt >= measuredFrom) sent += batch;
    });
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
