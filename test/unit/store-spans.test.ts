/**
 * The traced store (observability/tracing/store-spans.ts) over a real SQLite store: every
 * call answers exactly as the adapter does, in a `store <part>.<method>` span; a failure is
 * rethrown unchanged and marks its span with the error's code, never its message.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import { tracing as sdk } from '@opentelemetry/sdk-node';
import { LocusError } from '../../internal/errors.js';
import { tracedStore } from '../../internal/observability/tracing/store-spans.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const exporter = new sdk.InMemorySpanExporter();
const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] });
const raw = openSqliteStore(':memory:');
const store = tracedStore(raw, provider.getTracer('test'));
after(() => raw.close());

const N0 = '2026-01-01T00:00:00.000Z';

describe('traced store', () => {
  it('answers as the adapter does, one span per call, named by part and method', async () => {
    exporter.reset();
    const created = await store.tenants.create({ id: 'acme-secret', label: 'Acme', created: N0 });
    assert.deepEqual(created, await raw.tenants.get('acme-secret'));
    assert.deepEqual(await store.tenants.list(), await raw.tenants.list());
    assert.equal(await store.realms.get('nope'), null);
    await store.ping();
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => [s.name, s.attributes['locus.store.operation'], s.status.code]),
      [
        ['store tenants.create', 'tenants.create', SpanStatusCode.UNSET],
        ['store tenants.list', 'tenants.list', SpanStatusCode.UNSET],
        ['store realms.get', 'realms.get', SpanStatusCode.UNSET],
        ['store ping', 'ping', SpanStatusCode.UNSET],
      ],
    );
  });

  it('rethrows a failure unchanged and marks the span with its code, not its message', async () => {
    exporter.reset();
    const failure = await store.tenants.create({ id: 'acme-secret', label: null, created: N0 }).then(
      () => assert.fail('a second create must fail'),
      (err: unknown) => err,
    );
    assert.ok(failure instanceof LocusError);
    assert.equal(failure.code, 'conflict');
    const [span] = exporter.getFinishedSpans();
    assert.equal(span?.name, 'store tenants.create');
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes['locus.error.code'], 'conflict');
    assert.ok(!JSON.stringify([span.attributes, span.status, span.events]).includes('acme-secret'), 'no id in the span');
  });

  it('closes the adapter', async () => {
    const other = openSqliteStore(':memory:');
    await tracedStore(other, provider.getTracer('test')).close();
    await assert.rejects(other.tenants.list());
  });
});
