/**
 * Tracing configured by the standard OTEL_* environment alone: an OTLP traces endpoint
 * (here a small HTTP collector in this test, OTLP/HTTP JSON) turns it on; the SDK batches,
 * and the server's shutdown flushes the spans left to the collector, under the service name
 * OTEL_SERVICE_NAME gives. The log line of a request carries the exported span's trace id.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { trace } from '@opentelemetry/api';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { start, type RunningServer } from '../../internal/server.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

describe('tracing from the OTEL_* environment, exported over OTLP', () => {
  const exports: { path: string; contentType: string; body: OtlpExport }[] = [];
  let collector: Server;
  let dir: string;
  let server: RunningServer;

  before(async () => {
    collector = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        exports.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: JSON.parse(body) as OtlpExport });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const port = (collector.address() as AddressInfo).port;
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${port}/v1/traces`;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    process.env.OTEL_SERVICE_NAME = 'locus-otlp-test';
    process.env.OTEL_TRACES_SAMPLER = 'always_on';
    // Nothing is sent before the shutdown flushes it.
    process.env.OTEL_BSP_SCHEDULE_DELAY = '600000';
    dir = mkdtempSync(join(tmpdir(), 'locus-otlp-'));
    server = await start(testConfig({ store: `sqlite:${join(dir, 'locus.db')}` }), { logger: createLogger('info', logSink) });
  });

  after(async () => {
    await server.close();
    await new Promise((resolve) => collector.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('turns tracing on, exports the spans at shutdown, and logs the trace id', async () => {
    assert.equal(trace.getTracer('probe').startSpan('probe').isRecording(), true, 'the SDK registered a tracer provider');
    assert.ok(logLines.some((l) => l.msg === 'tracing on (OpenTelemetry)' && l.reason === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set'));
    const version = await fetch(`${server.httpUrl}/v2/version`);
    assert.equal(version.status, 200);
    await version.text();
    for (const probe of ['/healthz', '/readyz', '/health-check']) {
      const answer = await fetch(`${server.httpUrl}${probe}`);
      assert.equal(answer.status, 200);
      await answer.text();
    }
    const missing = await fetch(`${server.httpUrl}/v2/realm/none/object/x`);
    assert.equal(missing.status, 401);
    await missing.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(exports.length, 0, 'batched: nothing sent before the shutdown');

    await server.close();
    assert.ok(exports.length >= 1, 'the shutdown flushed the spans');
    assert.ok(exports.every((e) => e.path === '/v1/traces' && e.contentType.startsWith('application/json')));
    const resources = exports.flatMap((e) => e.body.resourceSpans);
    for (const resource of resources) {
      assert.equal(resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue, 'locus-otlp-test');
      // The command line (which may hold --admin-token) never goes to the collector.
      assert.ok(!resource.resource.attributes.some((a) => a.key.startsWith('process.command')), JSON.stringify(resource.resource.attributes));
    }
    const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const versionSpan = spans.find((s) => s.name === 'GET /v2/version');
    assert.ok(versionSpan, `spans: ${spans.map((s) => s.name).join(', ')}`);
    assert.ok(!spans.some((s) => /health|readyz/.test(s.name)), 'health probes are not traced');
    const refused = spans.find((s) => s.name === 'GET /v2/realm/:realm/*');
    assert.ok(refused, `spans: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(refused.attributes.find((a) => a.key === 'http.response.status_code')?.value.intValue, 401);

    const line = logLines.find((l) => l.msg === 'http request' && l.route === '/v2/version');
    assert.ok(line);
    assert.equal(line.trace_id, versionSpan.traceId);
    assert.equal(line.span_id, versionSpan.spanId);
  });
});

describe('a collector that never answers', () => {
  it('costs the spans not yet sent, not a clean stop: the shutdown goes on after the SDK had its second', async () => {
    const held: Socket[] = [];
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/traces`;
    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '5000';
    const dir = mkdtempSync(join(tmpdir(), 'locus-otlp-silent-'));
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    try {
      const server = await start(testConfig({ store: `sqlite:${join(dir, 'locus.db')}` }), { logger: createLogger('info', sink) });
      const answer = await fetch(`${server.httpUrl}/v2/version`);
      await answer.text();
      await server.close();
      // Cut by locus's own bound, not ended by the exporter's timeout.
      const cut = lines.find((l) => l.msg === 'tracing did not shut down cleanly') as { err?: { message?: string } } | undefined;
      assert.match(String(cut?.err?.message), /did not finish within 1000 ms/);
      assert.equal(lines.at(-1)?.msg, 'locus stopped');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
