/** Pre-encoded frames sent over one v1 connection with a window of them in flight, as the ingest benches send them. */
import { now } from './bench-clock.js';
import { processUse, usePerOperation } from './bench-stats.js';
import type { V1Client } from './v1-clients.js';

export interface WindowOptions {
  /** Frames sent and not yet answered, at most. */
  window: number;
  /** No frame is sent from this time on (bench-clock's now()); those in flight are still awaited. */
  stopAt: number;
  /** The action named when a reply is not all `suc`. */
  action: string;
  /** Called with the time each reply arrives. */
  onReply: (at: number) => void;
}

/** Sends `messages` in turn, `window` in flight, until `stopAt`; then awaits the rest. Every reply must be all `suc`. */
export async function sendWindowed(client: V1Client, messages: readonly string[], options: WindowOptions): Promise<void> {
  let sent = 0;
  let acked = 0;
  const pump = (): void => {
    while (sent - acked < options.window && now() < options.stopAt) {
      client.sendText(messages[sent % messages.length] as string);
      sent++;
    }
  };
  pump();
  while (acked < sent) {
    const reply = (await client.next(30_000)) as { res?: string }[];
    if (!reply.every((r) => r.res === 'suc')) throw new Error(`${options.action} failed: ${JSON.stringify(reply).slice(0, 500)}`);
    acked++;
    options.onReply(now());
    pump();
  }
}

/** Updates per second over the counted part, and the server's CPU time (µs) and bytes written per update; NaN without /proc. */
export interface Throughput {
  rate: number;
  cpuUs: number;
  bytes: number;
}

export interface ThroughputOptions {
  window: number;
  /** Not counted: the clock and the server's use start at the first reply after it. */
  warmupMs: number;
  /** Sent after the warm-up. */
  runMs: number;
  /** Updates each frame carries. */
  updatesPerFrame: number;
  /** The server process, for its CPU time and bytes written. */
  pid: number | undefined;
  action: string;
}

/** Sends frames with `window` in flight for warmupMs + runMs; counts from the first reply after the warm-up. */
export async function windowedThroughput(client: V1Client, messages: readonly string[], options: ThroughputOptions): Promise<Throughput> {
  let use = null as ReturnType<typeof processUse>;
  let countFrom = 0;
  let counted = 0;
  const started = now();
  await sendWindowed(client, messages, {
    window: options.window,
    stopAt: started + options.warmupMs + options.runMs,
    action: options.action,
    onReply: (t) => {
      if (t < started + options.warmupMs) return;
      if (countFrom === 0) {
        countFrom = t;
        use = processUse(options.pid);
      } else counted += options.updatesPerFrame;
    },
  });
  const seconds = (now() - countFrom) / 1000;
  const end = processUse(options.pid);
  return { rate: counted / seconds, ...usePerOperation(use, end, counted) };
}
