/**
 * What GET /metrics exposes: exactly the catalogue's metrics (names, types, help, labels)
 * and prom-client's process_* and nodejs_* ones; nothing at all with LOCUS_METRICS=false;
 * the realm label switched off, and bounded by LOCUS_METRICS_MAX_REALMS.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../internal/config/config.js';
import { catalogueNames, DEFAULT_METRIC_PREFIXES, METRICS } from '../../internal/observability/metric-catalogue.js';
import { LINT_FAILING_DEFAULTS } from '../../internal/observability/metrics/registry.js';
import { call, makeRealm, startHarness } from '../support/harness.js';
import { scrape, valueOf } from '../support/prometheus-text.js';

const at = { location: { longitude: 1, latitude: 1 } };

describe('/metrics exposition', () => {
  it('exposes exactly the catalogue (names, types, help, label names) plus the default prefixes, no token needed', async () => {
    const h = await startHarness();
    try {
      const s = await scrape(h.url);
      const families = [...s.types.keys()];
      const ours = families.filter((name) => name.startsWith('locus_'));
      assert.deepEqual([...ours].sort(), catalogueNames().sort());
      for (const name of families.filter((n) => !n.startsWith('locus_'))) {
        assert.ok(DEFAULT_METRIC_PREFIXES.some((prefix) => name.startsWith(prefix)), `${name} is neither the catalogue's nor a default one`);
      }
      assert.ok(families.includes('nodejs_eventloop_lag_seconds'));
      assert.ok(families.includes('process_cpu_seconds_total'));
      for (const left of LINT_FAILING_DEFAULTS) assert.ok(!families.includes(left), left);
      for (const spec of Object.values(METRICS)) {
        assert.equal(s.types.get(spec.name), spec.type, spec.name);
        assert.equal(s.help.get(spec.name), spec.help, spec.name);
        for (const sample of s.samples.filter((x) => x.name === spec.name || x.name.startsWith(`${spec.name}_`) && spec.type === 'histogram')) {
          const names = Object.keys(sample.labels).filter((l) => l !== 'le');
          assert.deepEqual(names.sort(), [...spec.labels].sort(), `${sample.name} ${JSON.stringify(sample.labels)}`);
        }
      }
    } finally {
      await h.stop();
    }
  });

  it('LOCUS_METRICS=false: no /metrics (404) and no registry', async () => {
    const h = await startHarness({ metrics: false });
    try {
      assert.equal(h.server.metrics, null);
      const res = await call(h.url, 'GET', '/metrics');
      assert.equal(res.status, 404);
      assert.equal(res.json.error.code, 'not_found');
      // The rest works as before.
      const tokens = await makeRealm(h.url, 'plain');
      assert.equal((await call(h.url, 'PUT', '/v2/realm/plain/object/a', { token: tokens.write, body: at })).status, 200);
    } finally {
      await h.stop();
    }
  });

  it('LOCUS_METRICS_REALM_LABEL=false: the per-realm series have no realm label', async () => {
    const h = await startHarness({ metricsRealmLabel: false });
    try {
      const tokens = await makeRealm(h.url, 'quiet');
      assert.equal((await call(h.url, 'PUT', '/v2/realm/quiet/object/a', { token: tokens.write, body: at })).status, 200);
      const s = await scrape(h.url);
      assert.equal(valueOf(s, 'locus_locations_ingested_total'), 1);
      for (const sample of s.samples) assert.ok(!('realm' in sample.labels), sample.name);
    } finally {
      await h.stop();
    }
  });

  it('LOCUS_METRICS_MAX_REALMS bounds the realm label: the realms after the first N are `_other`', async () => {
    const h = await startHarness({ metricsMaxRealms: 2 });
    try {
      for (const realm of ['r1', 'r2', 'r3', 'r4']) {
        const tokens = await makeRealm(h.url, realm);
        assert.equal((await call(h.url, 'PUT', `/v2/realm/${realm}/object/a`, { token: tokens.write, body: at })).status, 200);
      }
      const s = await scrape(h.url);
      const realms = s.samples.filter((x) => x.name === 'locus_locations_ingested_total').map((x) => [x.labels.realm, x.value]);
      assert.deepEqual(realms.sort(), [['_other', 2], ['r1', 1], ['r2', 1]]);
    } finally {
      await h.stop();
    }
  });

  it('the three settings are read from the environment and checked', () => {
    const config = loadConfig({ LOCUS_METRICS: 'false', LOCUS_METRICS_REALM_LABEL: '0', LOCUS_METRICS_MAX_REALMS: '7' });
    assert.deepEqual([config.metrics, config.metricsRealmLabel, config.metricsMaxRealms], [false, false, 7]);
    const defaults = loadConfig({});
    assert.deepEqual([defaults.metrics, defaults.metricsRealmLabel, defaults.metricsMaxRealms], [true, true, 100]);
    assert.throws(() => loadConfig({ LOCUS_METRICS: 'yes' }), /LOCUS_METRICS must be true or false/);
    assert.throws(() => loadConfig({ LOCUS_METRICS_MAX_REALMS: '0' }), /LOCUS_METRICS_MAX_REALMS must be at least 1/);
  });
});
