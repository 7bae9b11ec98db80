/**
 * Tracing off (the default: no OTEL_* variable asks for it): no tracer provider, context
 * manager or propagator is registered, the store and bus are the adapters themselves (no
 * decorator), NATS messages carry no headers, and log lines carry no trace id.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { context, propagation, ProxyTracerProvider, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { connect, type Msg, type NatsConnection } from 'nats';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken, call, makeRealm } from '../support/harness.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { connectWs } from '../support/v1-clients.js';

for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

describe('tracing off by default', () => {
  let nats: NatsServer;
  let watcher: NatsConnection;
  const received: Msg[] = [];
  let dir: string;
  let server: RunningServer;

  before(async () => {
    nats = await startNatsServer();
    watcher = await connect({ servers: nats.url });
    watcher.subscribe('locus.>', { callback: (_err, msg) => received.push(msg) });
    await watcher.flush();
    dir = mkdtempSync(join(tmpdir(), 'locus-tracing-off-'));
    server = await start(testConfig({ store: `sqlite:${join(dir, 'locus.db')}`, bus: nats.url, adminToken }), { logger: createLogger('info', logSink) });
  });

  after(async () => {
    await server.close();
    await watcher.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers no tracer provider, context manager or propagator', () => {
    const provider = trace.getTracerProvider();
    assert.ok(provider instanceof ProxyTracerProvider);
    assert.equal(provider.getDelegate().constructor.name, 'NoopTracerProvider');
    const span = trace.getTracer('probe').startSpan('probe');
    assert.equal(span.isRecording(), false);
    // The no-op context manager: context.with does not make a context active.
    const key = Symbol('probe');
    context.with(ROOT_CONTEXT.setValue(key, 1), () => assert.equal(context.active().getValue(key), undefined));
    assert.deepEqual(propagation.fields(), []);
  });

  it('uses the store adapter itself, not a traced decorator', () => {
    assert.notEqual(Object.getPrototypeOf(server.store.objects), Object.prototype);
  });

  it('writes log lines without trace ids and NATS messages without trace context, over REST and v1', async () => {
    const tokens = await makeRealm(server.httpUrl, 'quiet');
    const put = await call(server.httpUrl, 'PUT', '/v2/realm/quiet/object/car1', { token: tokens.write, body: { location: { longitude: 1, latitude: 2 } } });
    assert.equal(put.status, 200, put.text);
    const client = await connectWs(server.httpUrl, tokens.write);
    const reply = await client.one({ typ: 'obj', act: 'set', id: 'car2', rea: 'quiet', loc: { lon: 3, lat: 4 } });
    assert.equal(reply.res, 'suc', JSON.stringify(reply));
    await client.close();
    await watcher.flush();
    const deadline = Date.now() + 2000;
    while (!received.some((m) => m.subject.includes('quiet') && m.subject.includes('.evt.')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));

    const requests = logLines.filter((l) => l.msg === 'http request');
    assert.ok(requests.length >= 4, 'the realm, token and object requests were logged');
    for (const line of logLines) {
      assert.equal(line.trace_id, undefined, JSON.stringify(line));
      assert.equal(line.span_id, undefined, JSON.stringify(line));
    }
    const events = received.filter((m) => m.subject.includes('.evt.'));
    assert.ok(events.length > 0, 'the writes were published on NATS');
    // No trace context (metrics, on by default, may add their publish time).
    for (const msg of received) {
      for (const name of ['traceparent', 'tracestate', 'baggage']) assert.equal(msg.headers?.get(name) ?? '', '', `${msg.subject} carries ${name}`);
    }
  });
});
