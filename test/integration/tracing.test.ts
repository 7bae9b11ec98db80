/**
 * One trace across two API processes (issue #22): servers A and B in this test process,
 * each with its own tracer on one in-memory exporter, on ONE real nats-server and one
 * SQLite file (shared, as in the cluster). A REST write on A reaches a WebSocket subscriber
 * (Hivekit object subscription) on B; one trace id covers A's REST span, A's store span,
 * A's bus publish, B's bus deliver (parented through the `traceparent` header of the NATS
 * message) and B's WebSocket push, in that parent chain. The access log line of the
 * request carries the REST span's trace and span ids. No span names or attributes hold the
 * object id or the token.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { node, tracing as sdk } from '@opentelemetry/sdk-node';
import WebSocket from 'ws';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { Tracing } from '../../internal/observability/tracing/tracing.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken, call, makeRealm } from '../support/harness.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { connectTcp, postV1, wsUrl } from '../support/v1-clients.js';

type Span = sdk.ReadableSpan;

const exporter = new sdk.InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] });
provider.register();

const realm = 'traced';
const objectId = 'car-7f3e9b21';

/** Every log line A writes, parsed. */
const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, find: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const scope = (span: Span): string => span.instrumentationScope.name;
const parentOf = (span: Span): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: Span): string => span.spanContext().spanId;
const traceOf = (span: Span): string => span.spanContext().traceId;

/** True when `ancestor` is on `span`'s parent chain among `spans`. */
function descends(span: Span, ancestor: Span, spans: readonly Span[]): boolean {
  const byId = new Map(spans.map((s) => [idOf(s), s]));
  let parent = parentOf(span);
  while (parent !== undefined) {
    if (parent === idOf(ancestor)) return true;
    parent = byId.get(parent)?.parentSpanContext?.spanId;
  }
  return false;
}

/** A raw WebSocket client: every message of every frame kept. */
class Client {
  readonly messages: Record<string, unknown>[] = [];
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.messages.push(...(JSON.parse(data.toString('utf8')) as Record<string, unknown>[])));
  }

  static async open(url: string, token: string): Promise<Client> {
    const ws = new WebSocket(wsUrl(url));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const client = new Client(ws);
    ws.send(`Bearer ${token}`);
    await until('sign-in', () => client.messages.find((m) => m.act === 'aut'));
    return client;
  }

  async call(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.ws.send(JSON.stringify([message]));
    return until(`reply ${String(message.cid)}`, () => this.messages.find((m) => m.cid === message.cid));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close(1000);
    });
  }
}

describe('tracing across two processes on one NATS server', () => {
  let nats: NatsServer;
  let dir: string;
  let a: RunningServer;
  let b: RunningServer;
  let tokens: { read: string; write: string; admin: string };
  let subscriber: Client;

  before(async () => {
    nats = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'locus-tracing-'));
    const config = testConfig({ store: `sqlite:${join(dir, 'locus.db')}`, bus: nats.url, adminToken });
    a = await start(config, { tracing: new Tracing(provider.getTracer('server-a')), logger: createLogger('info', logSink) });
    b = await start(config, { tracing: new Tracing(provider.getTracer('server-b')) });
    tokens = await makeRealm(a.httpUrl, realm);
    subscriber = await Client.open(b.httpUrl, tokens.read);
    const created = await subscriber.call({ typ: 'sub', act: 'cre', id: 'watch', rea: realm, dat: { typ: 'obj', sty: 'rea' }, cid: 'c1' });
    assert.equal(created.res, 'suc', JSON.stringify(created));
    // B's interest in the realm has reached the NATS server before A writes.
    await until('B subscribed to the realm on NATS', async () => {
      const subsz = await nats.monitor<{ subscriptions_list?: { subject: string }[] }>('/subsz?subs=1&limit=10000');
      return (subsz.subscriptions_list ?? []).find((s) => s.subject.startsWith('locus.') && s.subject.includes(realm) && s.subject.endsWith('.>'));
    });
  });

  after(async () => {
    await subscriber.close();
    await a.close();
    await b.close();
    await nats.stop();
    await provider.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a REST write on A and its WebSocket push on B are one trace: REST → store, REST → bus publish → bus deliver (B) → websocket push (B)', async () => {
    await sleep(50);
    exporter.reset();
    subscriber.messages.length = 0;
    const put = await call(a.httpUrl, 'PUT', `/v2/realm/${realm}/object/${objectId}`, {
      token: tokens.write,
      body: { location: { longitude: 13.4, latitude: 52.5 } },
    });
    assert.equal(put.status, 200, put.text);
    const pushed = await until('the push on B', () => subscriber.messages.find((m) => m.typ === 'sub' && m.uty === 'dta'));
    assert.ok(JSON.stringify(pushed).includes(objectId), 'the push names the written object');
    const spans = await until('B push span', () => {
      const all = exporter.getFinishedSpans();
      return all.some((s) => scope(s) === 'server-b' && s.name === 'websocket push') ? all : undefined;
    });

    const rest = spans.find((s) => scope(s) === 'server-a' && s.kind === SpanKind.SERVER && s.name === 'PUT /v2/realm/:realm/object/:id');
    assert.ok(rest, `A's REST span among ${spans.map((s) => `${scope(s)}:${s.name}`).join(', ')}`);
    assert.equal(parentOf(rest), undefined, 'the REST span is the root');
    assert.equal(rest.attributes['http.request.method'], 'PUT');
    assert.equal(rest.attributes['http.route'], '/v2/realm/:realm/object/:id');
    assert.equal(rest.attributes['http.response.status_code'], 200);
    assert.equal(typeof rest.attributes['locus.realm'], 'string');
    const trace = traceOf(rest);
    const inTrace = spans.filter((s) => traceOf(s) === trace);

    const write = inTrace.find((s) => scope(s) === 'server-a' && s.name === 'store objects.upsertMany');
    assert.ok(write, "A's store span of the write");
    assert.ok(descends(write, rest, inTrace), 'the store span is under the REST span');

    const published = inTrace.filter((s) => scope(s) === 'server-a' && s.name === 'bus publish' && s.attributes['locus.bus.message'] === 'events');
    assert.equal(published.length, 1, "A's bus publish of the write's events");
    const publish = published[0] as Span;
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.ok(descends(publish, rest, inTrace), 'the publish is under the REST span');

    // One NATS message per kind of event the write caused (a location, an object written).
    const delivered = inTrace.filter((s) => scope(s) === 'server-b' && s.name === 'bus deliver');
    assert.ok(delivered.length >= 1, "B's delivery of the events");
    for (const deliver of delivered) {
      assert.equal(deliver.kind, SpanKind.CONSUMER);
      assert.equal(deliver.attributes['locus.bus.message'], 'events');
      assert.equal(parentOf(deliver), idOf(publish), "B's deliver span is a child of A's publish span (through the NATS headers)");
    }
    assert.ok(!inTrace.some((s) => scope(s) === 'server-a' && s.name === 'bus deliver'), 'A has no subscriber: no delivery on A');

    const push = inTrace.find((s) => scope(s) === 'server-b' && s.name === 'websocket push');
    assert.ok(push, "B's push span is in the trace");
    assert.ok(
      delivered.some((deliver) => parentOf(push) === idOf(deliver)),
      'the push is a child of a delivery',
    );
    assert.equal(push.attributes['locus.transport'], 'websocket');
    assert.equal(push.attributes['locus.push.outcome'], 'written');
    assert.equal(push.attributes['locus.push.messages'], 1);

    // Nothing of the object id, the token or the data in names or attributes.
    for (const span of spans) {
      const text = JSON.stringify([span.name, span.attributes]);
      for (const secret of [objectId, tokens.write, '13.4']) assert.ok(!text.includes(secret), `span ${span.name} holds ${secret}: ${text}`);
    }

    // The request's access log line carries the REST span's ids.
    const line = await until('the access log line', () => logLines.find((l) => l.msg === 'http request' && l.route === '/v2/realm/:realm/object/:id' && l.method === 'PUT'));
    assert.equal(line.trace_id, trace);
    assert.equal(line.span_id, idOf(rest));
  });

  it('v1 actions over WebSocket get a span each, with their store calls under them', async () => {
    exporter.reset();
    const writer = await Client.open(a.httpUrl, tokens.write);
    const ok = await writer.call({ typ: 'obj', act: 'rea', id: objectId, rea: realm, cid: 'g1' });
    assert.equal(ok.res, 'suc', JSON.stringify(ok));
    const missing = await writer.call({ typ: 'obj', act: 'rea', id: 'nobody-here', rea: realm, cid: 'g2' });
    assert.equal(missing.res, 'err');
    const unknown = await writer.call({ typ: 'obj', act: 'made-up-act', rea: realm, cid: 'g3' });
    assert.equal(unknown.res, 'err');
    await writer.close();
    const spans = exporter.getFinishedSpans().filter((s) => scope(s) === 'server-a');
    const actions = spans.filter((s) => s.name === 'v1 obj rea');
    assert.equal(actions.length, 2, spans.map((s) => s.name).join(', '));
    for (const action of actions) {
      assert.equal(action.kind, SpanKind.SERVER);
      assert.equal(action.attributes['locus.transport'], 'websocket');
      assert.equal(action.attributes['locus.v1.typ'], 'obj');
      assert.equal(action.attributes['locus.v1.act'], 'rea');
    }
    assert.deepEqual(actions.map((s) => s.attributes['locus.v1.result']).sort(), ['err', 'suc']);
    assert.equal(actions.find((s) => s.attributes['locus.v1.result'] === 'err')?.attributes['locus.v1.erc'], 404);
    for (const action of actions) {
      const reads = spans.filter((s) => s.name === 'store objects.get' && parentOf(s) === idOf(action));
      assert.equal(reads.length, 1, 'one store read under each action');
    }
    // A typ or act the server does not know is not named (it is the client's text).
    const unknownSpan = spans.find((s) => s.name === 'v1 unknown');
    assert.ok(unknownSpan);
    assert.equal(unknownSpan.attributes['locus.v1.act'], undefined);
    assert.equal(unknownSpan.attributes['locus.v1.erc'], 400);
    assert.ok(!spans.some((s) => s.name.includes('made-up-act')));
  });

  it('in one process the context goes through the local queue: REST write on A → bus publish → bus deliver (A) → tcp push (A)', async () => {
    const tcp = await connectTcp(a.tcpPort, tokens.read);
    const created = await tcp.one({ typ: 'sub', act: 'cre', id: 'local', rea: realm, dat: { typ: 'obj', sty: 'rea' } });
    assert.equal(created.res, 'suc', JSON.stringify(created));
    await sleep(50);
    exporter.reset();
    const put = await call(a.httpUrl, 'PUT', `/v2/realm/${realm}/object/${objectId}-2`, { token: tokens.write, body: { location: { longitude: 1, latitude: 1 } } });
    assert.equal(put.status, 200, put.text);
    await tcp.waitForEvents(1);
    const spans = await until('A tcp push span', () => {
      const all = exporter.getFinishedSpans();
      return all.some((s) => scope(s) === 'server-a' && s.name === 'tcp push') ? all : undefined;
    });
    await tcp.close();
    const rest = spans.find((s) => scope(s) === 'server-a' && s.name === 'PUT /v2/realm/:realm/object/:id');
    assert.ok(rest);
    const inTrace = spans.filter((s) => traceOf(s) === traceOf(rest));
    const publish = inTrace.find((s) => scope(s) === 'server-a' && s.name === 'bus publish' && s.attributes['locus.bus.message'] === 'events');
    assert.ok(publish && descends(publish, rest, inTrace));
    const delivered = inTrace.filter((s) => scope(s) === 'server-a' && s.name === 'bus deliver');
    assert.ok(delivered.length >= 1, 'A delivers to its own subscriber');
    for (const deliver of delivered) assert.equal(parentOf(deliver), idOf(publish));
    const push = inTrace.find((s) => scope(s) === 'server-a' && s.name === 'tcp push');
    assert.ok(push, 'the TCP push is in the trace');
    assert.equal(push.attributes['locus.transport'], 'tcp');
    assert.ok(delivered.some((deliver) => parentOf(push) === idOf(deliver)), 'the push is a child of a delivery');
  });

  it('/v1/http: the REST span continues an incoming traceparent; its actions are INTERNAL children, a batched run of writes one span', async () => {
    exporter.reset();
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const ids = ['v1-a', 'v1-b', 'v1-c'];
    const reply = await postV1(
      a.httpUrl,
      tokens.write,
      [{ typ: 'obj', act: 'rea', id: objectId, rea: realm, cid: 'r' }, ...ids.map((id, k) => ({ typ: 'obj', act: 'set', id, rea: realm, loc: { lon: k, lat: k }, cid: id }))],
      { traceparent: `00-${callerTrace}-${callerSpan}-01` },
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.json));
    const spans = await until('the REST span', () => {
      const all = exporter.getFinishedSpans().filter((s) => scope(s) === 'server-a');
      return all.some((s) => s.name === 'POST /v1/http') ? all : undefined;
    });
    const rest = spans.find((s) => s.name === 'POST /v1/http') as Span;
    assert.equal(traceOf(rest), callerTrace);
    assert.equal(parentOf(rest), callerSpan);
    const read = spans.find((s) => s.name === 'v1 obj rea');
    assert.ok(read);
    assert.equal(read.kind, SpanKind.INTERNAL);
    assert.equal(read.attributes['locus.transport'], 'http');
    assert.equal(parentOf(read), idOf(rest));
    const writes = spans.filter((s) => s.name === 'v1 obj set');
    assert.equal(writes.length, 1, 'the three writes ran as one batch: one span');
    const write = writes[0] as Span;
    assert.equal(write.attributes['locus.v1.messages'], 3);
    assert.equal(write.attributes['locus.v1.result'], 'suc');
    assert.equal(parentOf(write), idOf(rest));
    assert.ok(spans.some((s) => s.name === 'store objects.upsertMany' && descends(s, write, spans)), 'the batch store write is under the batch span');
  });
});
