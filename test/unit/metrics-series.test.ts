/**
 * The metrics' building blocks: lean counters and histograms (inclusive bucket bounds, the
 * text prom-client's Registry makes of them), the bounded realm label, the change-stream
 * listener, and the store decorator over a real SQLite store (operations and outcomes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry, type Metric } from 'prom-client';
import { LeanCounter, LeanHistogram } from '../../internal/observability/metrics/lean-series.js';
import { OTHER_REALMS, RealmLabels } from '../../internal/observability/metrics/realm-labels.js';
import { ChangeMetrics } from '../../internal/observability/metrics/change-metrics.js';
import { meteredStore, storeOperations } from '../../internal/observability/metrics/store-metrics.js';
import { MetricsRegistry } from '../../internal/observability/metrics/registry.js';
import { METRICS } from '../../internal/observability/metric-catalogue.js';
import { openStore } from '../../internal/store/open-store.js';
import type { ObjectChange } from '../../internal/domain/types.js';
import { parseScrape, valueOf } from '../support/prometheus-text.js';

describe('lean series', () => {
  it('a histogram counts a value equal to a bound in that bucket (le is inclusive), cumulative in the text', async () => {
    const h = new LeanHistogram('t_seconds', 'help', ['op'], [0.1, 1]);
    const cell = h.cell('x');
    for (const v of [0.05, 0.1, 0.5, 1, 3]) cell.observe(v);
    const registry = new Registry();
    registry.registerMetric(h as unknown as Metric);
    const s = parseScrape(await registry.metrics());
    assert.equal(valueOf(s, 't_seconds_bucket', { op: 'x', le: '0.1' }), 2);
    assert.equal(valueOf(s, 't_seconds_bucket', { op: 'x', le: '1' }), 4);
    assert.equal(valueOf(s, 't_seconds_bucket', { op: 'x', le: '+Inf' }), 5);
    assert.equal(valueOf(s, 't_seconds_count', { op: 'x' }), 5);
    assert.ok(Math.abs(valueOf(s, 't_seconds_sum', { op: 'x' }) - 4.65) < 1e-9);
    assert.equal(s.types.get('t_seconds'), 'histogram');
  });

  it('a counter cell is the same object for the same labels; label values are escaped in the text', async () => {
    const c = new LeanCounter('t_total', 'help', ['route']);
    assert.equal(c.cell('a"b\\c'), c.cell('a"b\\c'));
    c.cell('a"b\\c').inc(3);
    assert.throws(() => c.cell('a', 'b'), /takes 1 label values/);
    const registry = new Registry();
    registry.registerMetric(c as unknown as Metric);
    const s = parseScrape(await registry.metrics());
    assert.equal(valueOf(s, 't_total', { route: 'a"b\\c' }), 3);
  });
});

describe('the registry follows the catalogue', () => {
  it('registers every catalogue metric with its labels; without the realm label when it is off', () => {
    for (const realmLabel of [true, false]) {
      const m = new MetricsRegistry({ realmLabel });
      for (const spec of Object.values(METRICS)) {
        const metric = m.registry.getSingleMetric(spec.name) as unknown as { labelNames: string[] };
        assert.ok(metric !== undefined, spec.name);
        const expected = spec.labels.filter((l) => realmLabel || l !== 'realm');
        assert.deepEqual([...metric.labelNames], expected, spec.name);
      }
    }
  });
});

describe('realm labels', () => {
  it('are the readable realm name for the first maxRealms realms, `_other` after', () => {
    const labels = new RealmLabels(2);
    assert.equal(labels.of('fleet'), 'fleet');
    assert.equal(labels.of('acme\u001fdepot'), 'acme/depot');
    assert.equal(labels.of('third'), OTHER_REALMS);
    assert.equal(labels.of('fleet'), 'fleet');
  });

  it('the change listener counts stored fixes per realm with one inc per batch', () => {
    const counter = new LeanCounter('locus_locations_ingested_total', 'h', ['realm']);
    const listener = new ChangeMetrics(counter, new RealmLabels(1));
    const change = (fixes: number): ObjectChange =>
      ({ realm: 'r', id: 'x', old: null, new: null, history: new Array(fixes).fill({ longitude: 0, latitude: 0, time: 't' }), time: 't' });
    listener.objectsChanged('r1', [change(2), change(0), change(1)]);
    listener.objectsChanged('r2', [change(4)]);
    assert.equal(counter.cell('r1').value, 3);
    assert.equal(counter.cell(OTHER_REALMS).value, 4);
    const unlabelled = new LeanCounter('x_total', 'h', []);
    new ChangeMetrics(unlabelled, null).objectsChanged('r1', [change(5)]);
    assert.equal(unlabelled.cell().value, 5);
  });
});

describe('the metered store (real SQLite store)', () => {
  it('times each call by operation and outcome, and passes results and errors through', async () => {
    const inner = await openStore('sqlite::memory:', {});
    const histogram = new LeanHistogram('locus_store_operation_duration_seconds', 'h', ['operation', 'outcome'], [1]);
    const store = meteredStore(inner, histogram);
    try {
      await store.realms.put('r', { rateLimit: null } as never, new Date().toISOString()).catch(() => undefined);
      const realms = await inner.realms.list();
      assert.deepEqual(await store.realms.list(), realms);
      assert.equal(await store.objects.get('r', 'missing'), null);
      await assert.rejects(store.areas.update('nope', 'nope', {}));
      await store.ping();
      assert.equal(histogram.cell('realms.list', 'ok').count, 1);
      assert.equal(histogram.cell('objects.get', 'ok').count, 1);
      assert.equal(histogram.cell('areas.update', 'error').count, 1);
      assert.equal(histogram.cell('areas.update', 'ok').count, 0);
      assert.equal(histogram.cell('ping', 'ok').count, 1);
      assert.ok(storeOperations().includes('objects.upsertMany'));
      assert.ok(storeOperations().includes('signingKeys.listByTenant'));
    } finally {
      await store.close();
    }
  });
});
