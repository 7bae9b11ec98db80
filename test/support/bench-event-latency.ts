/**
 * Event latency from write to subscriber, as the protocol and cluster benches measure it: a TCP
 * writer sends blk at a fixed pace, the send time travelling as the fix's altitude (which nothing
 * indexes); one WebSocket and one TCP subscriber to the whole realm time each loc event on arrival.
 */
import { ms, percentile } from './bench-stats.js';
import { now, paced } from './bench-clock.js';
import { connectTcp, connectWs } from './v1-clients.js';
import { random } from './bench-areas.js';

/** Updates per blk of the writer. */
export const latencyBatch = 100;
/** The first part of the writes, not counted (new connections, code paths not yet compiled). */
export const latencyWarmupMs = 1000;
/** The counted part of the writes. */
export const latencyMs = 5000;

/** The sorted latencies (ms) of each subscriber, and how many updates were sent in the counted part. */
export interface Latency {
  ws: number[];
  tcp: number[];
  updates: number;
}

export interface EventLatencyOptions {
  realm: string;
  token: string;
  /** The process the subscribers connect to. */
  subscribeTo: { httpUrl: string; tcpPort: number };
  /** The TCP port of the process the writer connects to. */
  writeToPort: number;
  /** Updates per second. */
  rate: number;
  /** Ids `obj-0` … written in turn. */
  objectCount: number;
  /** How long to wait at most, after the writes, for every event to arrive. */
  drainMs: number;
  /** Said on stderr as the writes begin. */
  announce: string;
}

/** Subscribes, writes at `rate` for latencyWarmupMs + latencyMs, waits for the events, and closes the three connections. */
export async function eventLatency(options: EventLatencyOptions): Promise<Latency> {
  const { realm, token } = options;
  const batch = latencyBatch;
  const subscribers = { ws: await connectWs(options.subscribeTo.httpUrl, token), tcp: await connectTcp(options.subscribeTo.tcpPort, token) };
  const samples = { ws: [] as number[], tcp: [] as number[] };
  let measuredFrom = Number.POSITIVE_INFINITY;
  for (const name of ['ws', 'tcp'] as const) {
    const client = subscribers[name];
    const [reply] = await client.request([{ typ: 'sub', act: 'sub', rea: realm, cid: 'evt' }]);
    if (reply.res !== 'suc') throw new Error(`sub failed: ${JSON.stringify(reply)}`);
    // Each loc event is timed on arrival and dropped: the bench keeps numbers only, so
    // that its own garbage collection does not show up as server latency.
    // Updates sent in the warm-up are not counted.
    client.onEvent((event: { act?: string; dat?: { location?: { altitude?: number } } }, arrived) => {
      const sentAt = event.dat?.location?.altitude;
      if (event.act === 'loc' && typeof sentAt === 'number' && sentAt >= measuredFrom) samples[name].push(arrived - sentAt);
    });
  }
  const writer = await connectTcp(options.writeToPort, token);
  const rnd = random(99);
  const started = now();
  measuredFrom = started + latencyWarmupMs;
  let sent = 0;
  process.stderr.write(`${options.announce}\n`);
  await paced(now, started, (1000 * batch) / options.rate, measuredFrom + latencyMs, (k, sentAt) => {
    const objects = Array.from({ length: batch }, (_v, i) => ({
      id: `obj-${(k * batch + i) % options.objectCount}`,
      location: { longitude: 5 + rnd() * 10, latitude: 45 + rnd() * 10, altitude: sentAt },
    }));
    writer.sendText(JSON.stringify([{ typ: 'obj', act: 'blk', rea: realm, dat: { objects } }]));
    if (sentAt >= measuredFrom) sent += batch;
  });
  // Every update moves its object, so each subscriber gets one loc event per update.
  const drainBy = now() + options.drainMs;
  while ((samples.ws.length < sent || samples.tcp.length < sent) && now() < drainBy) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all([subscribers.ws, subscribers.tcp, writer].map((c) => c.close()));
  return { ws: samples.ws.sort((a, b) => a - b), tcp: samples.tcp.sort((a, b) => a - b), updates: sent };
}

/** p50 and p99 of sorted latencies, for the progress lines. */
export const latencySummary = (sorted: number[]): string => `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}`;

