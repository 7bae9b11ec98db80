/**
 * `npm run bench`: one v1 message of 10,000 actions (LOCUS_MAX_ACTIONS, the default
 * cap) per transport, against the real server in a child process, and what the rest of
 * the server sees meanwhile: a worker thread asks `/healthz` back to back (on its own
 * event loop, so the figure is the server's, not this process's) and keeps the worst
 * latency. Targets: 10,000 pins answered in ≤ 100 ms; worst `/healthz` ≤ 50 ms; 100,000
 * actions in ten messages cost about ten times one message. Prints a markdown section.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { benchAdminToken as adminToken, startBenchServer, stopBenchServer, type BenchServer } from '../support/bench-server.js';
import { connectTcp, connectWs, type V1Client } from '../support/v1-clients.js';

const realm = 'bench';
const actionsPerMessage = 10_000;
/** Measured runs per transport and kind of message (the median is reported). */
const runs = 7;
const warmups = 2;

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/** Asks /healthz back to back; on each "mark", reports the worst latency since the last mark. */
const proberSource = `
const { parentPort, workerData } = require('node:worker_threads');
let worst = 0;
let count = 0;
let running = true;
parentPort.on('message', (message) => {
  if (message === 'stop') running = false;
  else { parentPort.postMessage({ worst, count }); worst = 0; count = 0; }
});
(async () => {
  while (running) {
    const started = performance.now();
    await fetch(workerData.url).then((res) => res.arrayBuffer());
    worst = Math.max(worst, performance.now() - started);
    count++;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  parentPort.close();
})();
`;

class HealthProbe {
  private readonly worker: Worker;

  constructor(httpUrl: string) {
    this.worker = new Worker(proberSource, { eval: true, workerData: { url: `${httpUrl}/healthz` } });
  }

  /** The worst /healthz latency (ms) since the last mark, and how many answered. */
  mark(): Promise<{ worst: number; count: number }> {
    return new Promise((resolve) => {
      this.worker.once('message', resolve);
      this.worker.postMessage('mark');
    });
  }

  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    await new Promise((resolve) => this.worker.once('exit', resolve));
  }
}

type Transport = 'http' | 'ws' | 'tcp';

interface Sender {
  /** Sends one message and resolves with its reply's text length once it has arrived. */
  send(text: string): Promise<number>;
  close(): Promise<void>;
}

async function sender(server: BenchServer, transport: Transport, token: string): Promise<Sender> {
  if (transport === 'http') {
    return {
      send: async (text) => {
        const res = await fetch(`${server.httpUrl}/v1/http`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: text,
        });
        if (res.status !== 200) throw new Error(`/v1/http answered ${res.status}`);
        return (await res.text()).length;
      },
      close: () => Promise.resolve(),
    };
  }
  const client: V1Client = transport === 'ws' ? await connectWs(server.httpUrl, token) : await connectTcp(server.tcpPort, token);
  return {
    send: async (text) => {
      client.sendText(text);
      const reply = (await client.next(60_000)) as unknown[];
      if (reply.length !== actionsPerMessage) throw new Error(`a reply of ${reply.length} results`);
      return reply.length;
    },
    close: () => client.close(),
  };
}

function message(kind: 'pins' | 'updates', run: number): string {
  // Each message with its cid, so each gets its reply (Hivekit's envelope).
  if (kind === 'pins') return JSON.stringify(Array.from({ length: actionsPerMessage }, (_, i) => ({ typ: 'sys', act: 'pin', cid: i })));
  return JSON.stringify(
    Array.from({ length: actionsPerMessage }, (_, i) => ({
      typ: 'obj',
      act: 'cre',
      cid: i,
      id: `obj-${i}`,
      rea: realm,
      loc: { lon: 5 + ((i + run) % 100) / 10, lat: 45 + (i % 97) / 10 },
    })),
  );
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (value: number): string => value.toFixed(1);

interface Row {
  transport: Transport;
  kind: 'pins' | 'updates';
  median: number;
  worstRun: number;
  worstHealth: number;
  healthAnswers: number;
  tenMessages: number;
}

async function measure(server: BenchServer, probe: HealthProbe, transport: Transport, kind: 'pins' | 'updates', token: string): Promise<Row> {
  const client = await sender(server, transport, token);
  try {
    const times: number[] = [];
    let worstHealth = 0;
    let healthAnswers = 0;
    for (let run = 0; run < warmups + runs; run++) {
      const text = message(kind, run);
      await probe.mark();
      const started = performance.now();
      await client.send(text);
      const took = performance.now() - started;
      const health = await probe.mark();
      if (run < warmups) continue;
      times.push(took);
      worstHealth = Math.max(worstHealth, health.worst);
      healthAnswers += health.count;
    }
    // 100,000 actions: ten messages, each sent once the one before is answered.
    const texts = Array.from({ length: 10 }, (_, i) => message(kind, i));
    await probe.mark();
    const started = performance.now();
    for (const text of texts) await client.send(text);
    const tenMessages = performance.now() - started;
    worstHealth = Math.max(worstHealth, (await probe.mark()).worst);
    return { transport, kind, median: median(times), worstRun: Math.max(...times), worstHealth, healthAnswers, tenMessages };
  } finally {
    await client.close();
  }
}

async function main(): Promise<void> {
  const server = await startBenchServer({
    adminToken,
    env: { LOCUS_RATE_LIMIT: '1000000', LOCUS_RATE_BURST: '1000000' },
  });
  const probe = new HealthProbe(server.httpUrl);
  try {
    const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    await fetch(`${server.httpUrl}/admin/v1/realm/${realm}`, { method: 'PUT', headers, body: '{}' });
    const issued = (await (
      await fetch(`${server.httpUrl}/admin/v1/realm/${realm}/token`, { method: 'POST', headers, body: '{"scope":"write"}' })
    ).json()) as { token: string };
    const rows: Row[] = [];
    for (const kind of ['pins', 'updates'] as const) {
      for (const transport of ['http', 'ws', 'tcp'] as const) {
        log(`messages: ${kind} over ${transport}`);
        rows.push(await measure(server, probe, transport, kind, issued.token));
      }
    }
    const pinsMet = rows.filter((r) => r.kind === 'pins').every((r) => r.median <= 100);
    const pinRows = rows.filter((r) => r.kind === 'pins');
    const healthMet = pinRows.every((r) => r.worstHealth <= 50);
    const updateHealth = Math.max(...rows.filter((r) => r.kind === 'updates').map((r) => r.worstHealth));
    const lines = [
      '## One message of 10,000 actions',
      '',
      `\`npm run bench\` (test/bench/messages.bench.ts): one v1 message of ${actionsPerMessage.toLocaleString('en')} actions, sent once the`,
      `one before is answered, over one connection per transport; ${runs} runs after ${warmups} warm-ups, the median reported.`,
      '`sys pin` answers at once; `obj cre` (create or update) moves 10,000 objects (committed about 1,000 at a time while the message runs). Meanwhile a worker thread asks `/healthz`',
      'back to back, and the worst latency it saw over every run of the row is reported. "Ten messages" sends 100,000',
      'actions as ten messages in a row; the ratio is its time over ten times the median of one.',
      '',
      '| Actions | Transport | One message, median ms | worst run ms | Ten messages ms | ratio | Worst `/healthz` ms | `/healthz` answers |',
      '|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.kind === 'pins' ? '`sys pin`' : '`obj cre`'} | ${r.transport} | ${ms(r.median)} | ${ms(r.worstRun)} | ${ms(r.tenMessages)} | ${(r.tenMessages / (10 * r.median)).toFixed(2)} | ${ms(r.worstHealth)} | ${r.healthAnswers} |`,
      ),
      '',
      `Targets: 10,000 pins answered in ≤ 100 ms: ${pinsMet ? 'met' : 'NOT met'}; worst \`/healthz\` ≤ 50 ms while they run: ${healthMet ? 'met' : 'NOT met'}.`,
      `While 10,000 updates are written (no target), the worst \`/healthz\` was ${ms(updateHealth)} ms.`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await probe.stop();
    await stopBenchServer(server);
  }
}

await main();
