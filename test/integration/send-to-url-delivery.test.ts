/**
 * sendToUrl deliveries over real sockets (instructions/delivery/delivery-queue.ts): a local
 * receiver (node:http on 127.0.0.1, allowed through the allow list) gets the exact body and
 * headers; 5xx and 429 are retried with growing waits, 4xx are not, a silent receiver times out,
 * a redirect is not followed; loopback and private targets are refused without the allow list
 * and never connected to; a full queue drops and says so; deliveries cut short get no outcome.
 * The metrics are read from a real registry and checked with promtool.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../internal/config/config.js';
import type { TrackedObject } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { emptyAllowList, parseAllowList, type AllowList } from '../../internal/instructions/delivery/address-ranges.js';
import { startDelivery } from '../../internal/instructions/delivery/delivery-setup.js';
import { DeliveryQueue, type Delivery, type DeliveryOutcome, type DeliveryResult } from '../../internal/instructions/delivery/delivery-queue.js';
import { sendToUrlBody } from '../../internal/instructions/delivery/hivekit-body.js';
import type { InstructionLogEntry } from '../../internal/instructions/delivery/instruction-log.js';
import { UrlGuard, type Resolver } from '../../internal/instructions/delivery/url-guard.js';
import { collectQueueDepth, deliveryMetrics } from '../../internal/observability/metrics/delivery-metrics.js';
import { MetricsRegistry } from '../../internal/observability/metrics/registry.js';
import { parseScrape, valueOf } from '../support/prometheus-text.js';
import { toolPath } from '../support/tools.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Answer = (req: Received, res: http.ServerResponse) => void;

/** A real HTTP receiver on 127.0.0.1; `answer` decides each reply (default 204). */
async function receiver(answer: Answer = (_req, res) => res.writeHead(204).end()): Promise<{ url: string; port: number; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      received.push(entry);
      answer(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A queue as the server builds one, with its log and metrics kept for the test to read. */
function queueFor(allow: AllowList, options: { retries?: number; timeoutMs?: number; capacity?: number; concurrency?: number; resolve?: Resolver } = {}) {
  const log: { realm: string; entry: Omit<InstructionLogEntry, 'tim'> }[] = [];
  const registry = new MetricsRegistry({ realmLabel: true });
  const settled: { outcome: DeliveryOutcome; seconds: number | null }[] = [];
  const metrics = deliveryMetrics(registry);
  const queue = new DeliveryQueue({
    guard: new UrlGuard(allow, options.resolve),
    log: { append: (realm, entry) => log.push({ realm, entry: { id: entry.id, lvl: entry.lvl, msg: entry.msg } }) },
    capacity: options.capacity ?? 1000,
    concurrency: options.concurrency ?? 4,
    timeoutMs: options.timeoutMs ?? 5000,
    retries: options.retries ?? 3,
    backoff: { baseMs: 60, maxMs: 2000 },
    metrics: {
      settled: (outcome, seconds) => {
        settled.push({ outcome, seconds });
        metrics.settled(outcome, seconds);
      },
    },
  });
  collectQueueDepth(registry, queue);
  return { queue, log, settled, registry };
}

/** Enqueues and waits for the outcome. */
function deliver(queue: DeliveryQueue, delivery: Delivery): Promise<DeliveryResult> {
  return new Promise((resolve, reject) => {
    if (!queue.enqueue(delivery, resolve)) reject(new Error('not taken'));
  });
}

const delivery = (url: string, overrides: Partial<Delivery> = {}): Delivery => ({ realm: 'r1', instruction: 'low-battery', key: 'r1:low-battery:7:then:1', url, body: '[]', ...overrides });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const scooter: TrackedObject = {
  id: 'scooter-1',
  label: 'Scooter 1',
  location: { longitude: 13.4, latitude: 52.5, accuracy: 5, time: '2026-03-01T10:00:00.000Z' },
  data: { type: 'scooter', charge: 8 },
  seen: '2026-03-01T10:00:00.120Z',
  tasks: ['t1'],
};
const bat: TrackedObject = { id: 'bat', label: null, location: null, data: {}, seen: null };

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

describe('sendToUrl delivery, real sockets', () => {
  it('POSTs the exact body with Content-Type, X-Locus-Instruction and Idempotency-Key to an allowed local receiver', async () => {
    const rx = await receiver();
    closers.push(rx.close);
    const { queue, log, settled } = queueFor(parseAllowList(['127.0.0.1']));
    closers.push(() => queue.close());
    const body = sendToUrlBody([
      { kind: 'object', id: 'scooter-1', object: scooter },
      { kind: 'pair', a: 'scooter-1', b: 'bat', objects: [scooter, bat] },
      { kind: 'object', id: 'gone', object: null },
    ]);
    const result = await deliver(queue, delivery(`${rx.url}/hooks/battery?x=1`, { body, instruction: 'low bättery' }));
    assert.deepEqual(result, { outcome: 'success', attempts: 1, reason: null });
    assert.equal(rx.received.length, 1);
    const [got] = rx.received as [Received];
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/hooks/battery?x=1');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-locus-instruction'], 'low%20b%C3%A4ttery');
    assert.equal(got.headers['idempotency-key'], 'r1:low-battery:7:then:1');
    assert.equal(got.headers['content-length'], String(Buffer.byteLength(body)));
    assert.equal(got.headers.host, `127.0.0.1:${rx.port}`);
    assert.equal(got.body, body);
    const scooterSent = {
      id: 'scooter-1',
      lab: 'Scooter 1',
      loc: { gcs: '', lon: 13.4, lat: 52.5, acc: 5, spe: 0, hea: 0, alt: 0, alc: 0, tim: '2026-03-01T10:00:00.000Z' },
      dat: { type: 'scooter', charge: 8 },
      lastExternalUpdate: '2026-03-01T10:00:00.120Z',
    };
    assert.deepEqual(JSON.parse(got.body), [
      scooterSent,
      { objects: [scooterSent, { id: 'bat', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, lastExternalUpdate: null }] },
      { id: 'gone' },
    ]);
    assert.deepEqual(log, []);
    assert.equal(settled.length, 1);
    assert.equal(settled[0]?.outcome, 'success');
  });

  it('retries a 500 with growing, jittered waits and the same idempotency key, then succeeds', async () => {
    let calls = 0;
    const rx = await receiver((_req, res) => {
      calls++;
      res.writeHead(calls <= 2 ? 500 : 200).end('ok');
    });
    closers.push(rx.close);
    const { queue, log } = queueFor(parseAllowList(['127.0.0.0/8']));
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(`${rx.url}/x`));
    assert.deepEqual(result, { outcome: 'success', attempts: 3, reason: null });
    assert.equal(rx.received.length, 3);
    assert.deepEqual(new Set(rx.received.map((r) => r.headers['idempotency-key'])), new Set(['r1:low-battery:7:then:1']));
    assert.deepEqual(new Set(rx.received.map((r) => r.body)), new Set(['[]']));
    const [a, b, c] = rx.received.map((r) => r.at) as [number, number, number];
    // Base 60 ms: the first wait is 30..60 ms, the second 60..120 ms.
    assert.ok(b - a >= 28, `first wait ${b - a} ms`);
    assert.ok(c - b >= 58, `second wait ${c - b} ms`);
    assert.deepEqual(log, []);
  });

  it('waits at least a 429 answer\'s Retry-After before retrying', async () => {
    let calls = 0;
    const rx = await receiver((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(429, { 'Retry-After': '1' }).end();
      else res.writeHead(202).end();
    });
    closers.push(rx.close);
    const { queue } = queueFor(parseAllowList(['127.0.0.1']));
    closers.push(() => queue.close());
    assert.equal((await deliver(queue, delivery(rx.url))).outcome, 'success');
    const [a, b] = rx.received.map((r) => r.at) as [number, number];
    assert.ok(b - a >= 990, `waited ${b - a} ms`);
  });

  it('gives up after the retries, logging an error event with the last reason', async () => {
    const rx = await receiver((_req, res) => res.writeHead(503).end());
    closers.push(rx.close);
    const { queue, log, settled } = queueFor(parseAllowList(['127.0.0.1']), { retries: 2 });
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(`${rx.url}/down?secret=abc`));
    assert.deepEqual(result, { outcome: 'failed', attempts: 3, reason: 'HTTP 503 (gave up after 3 tries)' });
    assert.equal(rx.received.length, 3);
    assert.deepEqual(log, [
      { realm: 'r1', entry: { id: 'low-battery', lvl: 'error', msg: `sendToUrl ${rx.url}/down failed: HTTP 503 (gave up after 3 tries)` } },
    ]);
    assert.equal(settled[0]?.outcome, 'failed');
    assert.ok((settled[0]?.seconds ?? 0) > 0);
  });

  it('does not retry a 4xx', async () => {
    const rx = await receiver((_req, res) => res.writeHead(400).end('no'));
    closers.push(rx.close);
    const { queue, log } = queueFor(parseAllowList(['127.0.0.1']));
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(rx.url));
    assert.deepEqual(result, { outcome: 'failed', attempts: 1, reason: 'HTTP 400' });
    await sleep(300);
    assert.equal(rx.received.length, 1);
    assert.equal(log[0]?.entry.lvl, 'error');
  });

  it('times out a receiver that does not answer, and retries it', async () => {
    const rx = await receiver(() => undefined);
    closers.push(rx.close);
    const { queue } = queueFor(parseAllowList(['127.0.0.1']), { timeoutMs: 200, retries: 1 });
    closers.push(() => queue.close());
    const started = performance.now();
    const result = await deliver(queue, delivery(rx.url));
    const took = performance.now() - started;
    assert.deepEqual(result, { outcome: 'failed', attempts: 2, reason: 'no answer within 200 ms (gave up after 2 tries)' });
    assert.equal(rx.received.length, 2);
    assert.ok(took >= 400 && took < 2000, `took ${took} ms`);
  });

  it('does not follow a redirect: a 3xx fails the delivery, and the Location is never asked', async () => {
    const elsewhere = await receiver();
    closers.push(elsewhere.close);
    const rx = await receiver((_req, res) => res.writeHead(307, { Location: `${elsewhere.url}/stolen` }).end());
    closers.push(rx.close);
    const { queue } = queueFor(parseAllowList(['127.0.0.1']));
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(rx.url));
    assert.deepEqual(result, { outcome: 'failed', attempts: 1, reason: `HTTP 307: the redirect to ${elsewhere.url}/stolen is not followed` });
    await sleep(200);
    assert.equal(rx.received.length, 1);
    assert.equal(elsewhere.received.length, 0);
  });

  it('retries a receiver that refuses connections, then gives up', async () => {
    const rx = await receiver();
    const closedUrl = rx.url;
    await rx.close();
    const { queue } = queueFor(parseAllowList(['127.0.0.1']), { retries: 1 });
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(closedUrl));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.attempts, 2);
    assert.match(result.reason ?? '', /ECONNREFUSED .*\(gave up after 2 tries\)$/);
  });

  it('refuses loopback and private targets without the allow setting, never connecting', async () => {
    const rx = await receiver();
    closers.push(rx.close);
    const { queue, log, registry } = queueFor(emptyAllowList);
    closers.push(() => queue.close());
    const targets = [rx.url, `http://localhost:${rx.port}/`, `http://[::1]:${rx.port}/`, 'http://10.1.2.3/', 'http://169.254.169.254/latest/meta-data', 'http://192.168.0.1/', 'http://[fd00::1]/'];
    for (const url of targets) {
      const result = await deliver(queue, delivery(url));
      assert.equal(result.outcome, 'refused', url);
      assert.equal(result.attempts, 0, url);
      assert.match(result.reason ?? '', /is a (loopback|private|link-local|unique-local \(private\)) address; LOCUS_SEND_TO_URL_ALLOW may allow it$/, url);
    }
    assert.equal(rx.received.length, 0);
    assert.equal(log.length, targets.length);
    assert.deepEqual(log[0], { realm: 'r1', entry: { id: 'low-battery', lvl: 'error', msg: `sendToUrl ${rx.url}/ refused: 127.0.0.1 is a loopback address; LOCUS_SEND_TO_URL_ALLOW may allow it` } });
    const scraped = parseScrape(await registry.scrape());
    assert.equal(valueOf(scraped, 'locus_send_to_url_deliveries_total', { outcome: 'refused' }), targets.length);
    assert.equal(valueOf(scraped, 'locus_send_to_url_deliveries_total', { outcome: 'success' }), 0);
  });

  it('connects to the vetted address, not to what the name resolves to later (DNS rebinding)', async () => {
    const rx = await receiver();
    closers.push(rx.close);
    const asked: string[] = [];
    // Vetted once per attempt; a second lookup (by the HTTP client) would get a private address,
    // and the system resolver does not know the name at all.
    const rebinding: Resolver = (host) => {
      asked.push(host);
      return Promise.resolve(asked.length === 1 ? ['127.0.0.1'] : ['10.0.0.1']);
    };
    const { queue } = queueFor(parseAllowList(['127.0.0.1']), { resolve: rebinding });
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(`http://rebind.test:${rx.port}/in`));
    assert.deepEqual(result, { outcome: 'success', attempts: 1, reason: null });
    assert.deepEqual(asked, ['rebind.test']);
    assert.equal(rx.received[0]?.headers.host, `rebind.test:${rx.port}`);
  });

  it('reaches an allowed IPv6 literal ([::1]) and an IPv4-mapped one', async () => {
    const received: string[] = [];
    const server = http.createServer((req, res) => {
      received.push(req.headers.host ?? '');
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '::', resolve));
    closers.push(() => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
    const { port } = server.address() as AddressInfo;
    const { queue } = queueFor(parseAllowList(['::1', '127.0.0.1']));
    closers.push(() => queue.close());
    assert.equal((await deliver(queue, delivery(`http://[::1]:${port}/`))).outcome, 'success');
    assert.equal((await deliver(queue, delivery(`http://[::ffff:127.0.0.1]:${port}/`))).outcome, 'success');
    assert.deepEqual(received, [`[::1]:${port}`, `[::ffff:7f00:1]:${port}`]);
  });

  it('an allowed host name is reached whatever loopback address it resolves to', async () => {
    const rx = await receiver();
    closers.push(rx.close);
    const { queue } = queueFor(parseAllowList(['localhost']));
    closers.push(() => queue.close());
    assert.equal((await deliver(queue, delivery(`http://localhost:${rx.port}/`))).outcome, 'success');
  });

  it('a full realm queue drops (warn log event, counted, done told), never blocking; other realms are not affected', async () => {
    const held: http.ServerResponse[] = [];
    const rx = await receiver((_req, res) => held.push(res));
    closers.push(rx.close);
    const { queue, log, registry } = queueFor(parseAllowList(['127.0.0.1']), { capacity: 2, concurrency: 1 });
    closers.push(() => queue.close());
    const outcomes: (DeliveryOutcome | null)[] = [null, null, null, null, null];
    const taken = [0, 1, 2, 3].map((k) => queue.enqueue(delivery(rx.url, { key: `k${k}` }), (r) => void (outcomes[k] = r.outcome)));
    const otherRealm = queue.enqueue(delivery(rx.url, { realm: 'r2', key: 'other' }), (r) => void (outcomes[4] = r.outcome));
    assert.deepEqual(taken, [true, true, false, false]);
    assert.equal(otherRealm, true);
    // `done` is never called inside enqueue.
    assert.deepEqual(outcomes, [null, null, null, null, null]);
    assert.equal(queue.depth('r1'), 2);
    assert.equal(queue.depth(), 3);
    const mid = parseScrape(await registry.scrape());
    assert.equal(valueOf(mid, 'locus_send_to_url_queue_depth'), 3);
    await sleep(50);
    assert.deepEqual(outcomes, [null, null, 'dropped', 'dropped', null]);
    assert.deepEqual(
      log.map((l) => l.entry),
      [2, 3].map(() => ({ id: 'low-battery', lvl: 'warn', msg: `sendToUrl ${rx.url}/ dropped: the realm's delivery queue is full (2 deliveries waiting or under way)` })),
    );
    // One at a time per realm: r1's second waits for its first.
    await waitFor(() => held.length === 2);
    assert.deepEqual(rx.received.map((r) => r.headers['idempotency-key']).sort(), ['k0', 'other']);
    for (const res of held.splice(0)) res.writeHead(200).end();
    await waitFor(() => held.length === 1);
    held[0]?.writeHead(200).end();
    await waitFor(() => outcomes.every((o) => o !== null));
    assert.deepEqual(outcomes, ['success', 'success', 'dropped', 'dropped', 'success']);
    assert.equal(queue.depth(), 0);
    const end = parseScrape(await registry.scrape());
    assert.equal(valueOf(end, 'locus_send_to_url_deliveries_total', { outcome: 'dropped' }), 2);
    assert.equal(valueOf(end, 'locus_send_to_url_deliveries_total', { outcome: 'success' }), 3);
    assert.equal(valueOf(end, 'locus_send_to_url_duration_seconds_count', { outcome: 'success' }), 3);
    assert.equal(valueOf(end, 'locus_send_to_url_queue_depth'), 0);
    const check = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: await registry.scrape(), encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
    assert.equal(`${check.stdout}${check.stderr}`.trim(), '');
  });

  it('stopRealm and close cut deliveries short without an outcome (the outbox keeps them); close takes nothing more', async () => {
    const held: http.ServerResponse[] = [];
    const rx = await receiver((_req, res) => held.push(res));
    closers.push(rx.close);
    const { queue, log, settled } = queueFor(parseAllowList(['127.0.0.1']), { concurrency: 1 });
    const outcomes: DeliveryOutcome[] = [];
    const record = (r: DeliveryResult): void => void outcomes.push(r.outcome);
    queue.enqueue(delivery(rx.url, { key: 'a1' }), record);
    queue.enqueue(delivery(rx.url, { key: 'a2' }), record);
    queue.enqueue(delivery(rx.url, { realm: 'r2', key: 'b1' }), record);
    await waitFor(() => held.length === 2);
    queue.stopRealm('r1');
    assert.equal(queue.depth('r1'), 0);
    assert.equal(queue.depth(), 1);
    await queue.close();
    assert.equal(queue.enqueue(delivery(rx.url, { key: 'late' }), record), false);
    await sleep(100);
    assert.deepEqual(outcomes, []);
    assert.deepEqual(log, []);
    assert.deepEqual(settled, []);
    assert.equal(queue.depth(), 0);
  });
});

describe('sendToUrl delivery: TLS and the process set-up', () => {
  it('https: connects to the vetted address with the URL\'s name for SNI, and verifies the certificate (a self-signed one fails)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-send-tls-'));
    closers.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=hooks.test', '-addext', 'subjectAltName=DNS:hooks.test'], { cwd: dir, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const names: string[] = [];
    let requests = 0;
    const server = https.createServer(
      {
        key: readFileSync(join(dir, 'k.pem')),
        cert: readFileSync(join(dir, 'c.pem')),
        SNICallback: (name, callback) => {
          names.push(name);
          callback(null);
        },
      },
      (_req, res) => {
        requests++;
        res.writeHead(200).end();
      },
    );
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const { queue } = queueFor(parseAllowList(['127.0.0.1']), { retries: 0, resolve: (host) => Promise.resolve(host === 'hooks.test' ? ['127.0.0.1'] : []) });
    closers.push(() => queue.close());
    const result = await deliver(queue, delivery(`https://hooks.test:${port}/in`));
    assert.equal(result.outcome, 'failed');
    assert.match(result.reason ?? '', /self[- ]signed certificate/);
    assert.deepEqual(names, ['hooks.test']);
    assert.equal(requests, 0);
  });

  it('a 200 whose body the receiver cuts off is delivered (the status decides), not sent again', async () => {
    const rx = await receiver((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('partial');
      setTimeout(() => res.destroy(), 20);
    });
    closers.push(rx.close);
    const { queue } = queueFor(parseAllowList(['127.0.0.1']));
    closers.push(() => queue.close());
    assert.deepEqual(await deliver(queue, delivery(rx.url)), { outcome: 'success', attempts: 1, reason: null });
    await sleep(100);
    assert.equal(rx.received.length, 1);
  });

  it('a completion callback that throws or rejects is logged; the queue goes on', async () => {
    const rx = await receiver();
    closers.push(rx.close);
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
    const queue = new DeliveryQueue({ guard: new UrlGuard(parseAllowList(['127.0.0.1'])), log: { append: () => undefined }, capacity: 10, concurrency: 1, timeoutMs: 5000, retries: 0, logger });
    closers.push(() => queue.close());
    queue.enqueue(delivery(rx.url, { key: 'throws' }), () => {
      throw new Error('store gone');
    });
    queue.enqueue(delivery(rx.url, { key: 'rejects' }), () => Promise.reject(new Error('store gone too')));
    assert.equal((await deliver(queue, delivery(rx.url, { key: 'fine' }))).outcome, 'success');
    await waitFor(() => lines.length === 2);
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { err: { message: string } }).err.message).sort(), ['store gone', 'store gone too']);
    assert.equal(rx.received.length, 3);
  });

  it('startDelivery: the configured queue, its failures in the realm\'s log as a listening process keeps it, the depth on /metrics', async () => {
    const rx = await receiver((_req, res) => res.writeHead(404).end());
    closers.push(rx.close);
    const bus = new LocalEventBus();
    const registry = new MetricsRegistry({ realmLabel: true });
    const config = { ...loadConfig({ LOCUS_SEND_TO_URL_ALLOW: '127.0.0.1', LOCUS_INSTRUCTION_LOG_SIZE: '2' }) };
    const parts = startDelivery(config, bus, { metrics: registry });
    closers.push(() => parts.close());
    const held = parts.log.listen('r1');
    for (const key of ['a', 'b', 'c']) assert.equal((await deliver(parts.queue, delivery(`${rx.url}/${key}`, { key }))).outcome, 'failed');
    await waitFor(() => parts.log.recent('r1').length === 2);
    await sleep(20);
    assert.deepEqual(
      parts.log.recent('r1').map((e) => [e.id, e.lvl, e.msg]),
      ['b', 'c'].map((key) => ['low-battery', 'error', `sendToUrl ${rx.url}/${key} failed: HTTP 404`]),
    );
    const scraped = parseScrape(await registry.scrape());
    assert.equal(valueOf(scraped, 'locus_send_to_url_deliveries_total', { outcome: 'failed' }), 3);
    assert.equal(valueOf(scraped, 'locus_send_to_url_queue_depth'), 0);
    held.unsubscribe();
    await parts.close();
    assert.equal(parts.queue.enqueue(delivery(rx.url)), false);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(10);
  }
}
