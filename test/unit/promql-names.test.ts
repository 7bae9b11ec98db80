/** The helpers that hold dashboards and rule files to the metric catalogue (test/support/promql.ts). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { dashboardExprs, metricNames, ruleExprs, substituteGrafanaVariables, unknownMetric } from '../support/promql.js';

describe('PromQL metric names', () => {
  it('finds the metrics and only the metrics', () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (route, le) (rate(locus_http_request_duration_seconds_bucket{job=~"a|b", route!="x{y}"}[5m] offset 1h)))',
      ),
      ['locus_http_request_duration_seconds_bucket'],
    );
    assert.deepEqual(
      metricNames('sum(rate(a_total[1m])) by (job) / ignoring (route) group_left sum without (instance) (b_total) > bool 1e3 and on (job) c'),
      ['a_total', 'b_total', 'c'],
    );
    assert.deepEqual(metricNames('label_replace(up, "dst", "$1", "instance", "(.*):.*") * on() group_right() vector(1)'), ['up']);
    assert.deepEqual(metricNames('{__name__="locus_realms"} + time()'), ['locus_realms']);
    assert.deepEqual(metricNames('job:locus_http_slow_ratio:rate1h > (14.4 * 0.01)'), ['job:locus_http_slow_ratio:rate1h']);
    assert.deepEqual(metricNames('1 + 2'), []);
  });

  it('accepts catalogue metrics, their histogram series, defaults, recorded and kube-state-metrics names', () => {
    const recorded = new Set(['job:x:rate5m']);
    for (const ok of ['locus_http_requests_total', 'locus_store_operation_duration_seconds_bucket', 'locus_bus_delivery_lag_seconds_count', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total', 'nodejs_gc_duration_seconds_bucket', 'job:x:rate5m', 'kube_pod_container_status_restarts_total']) {
      assert.equal(unknownMetric(ok, recorded), null, ok);
    }
    for (const bad of ['locus_http_requests', 'locus_store_up_bucket', 'up', 'kube_pod_info', 'job:y:rate5m', 'nodejs_eventloop_lag_p95_seconds', 'nodejs_active_handles_total', 'process_cpu_seconds']) {
      assert.match(unknownMetric(bad, recorded) ?? '', new RegExp(`^${bad} is not in internal/observability/metric-catalogue.ts`), bad);
    }
  });

  it('replaces Grafana variables and refuses unknown ones', () => {
    assert.equal(
      substituteGrafanaVariables('rate(x{realm=~"$realm",job=~"${job}"}[$__rate_interval]) + increase(x[$__range]) + rate(x[${__interval}])'),
      'rate(x{realm=~"fleet",job=~"locus"}[1m]) + increase(x[1h]) + rate(x[30s])',
    );
    assert.throws(() => substituteGrafanaVariables('rate(x{pod="$pod"}[5m])'), /unknown Grafana variable \$pod/);
  });

  it('walks panels, nested row panels and templating queries', () => {
    const exprs = dashboardExprs('d.json', {
      panels: [
        { title: 'A', targets: [{ refId: 'A', expr: 'a' }, { refId: 'B' }] },
        { type: 'row', title: 'R', panels: [{ title: 'Inner', targets: [{ refId: 'A', expr: 'b' }] }] },
      ],
      templating: {
        list: [
          { name: 'datasource', query: 'prometheus' },
          { name: 'realm', query: { query: 'label_values(c{job="x"}, realm)' } },
          { name: 'old', query: 'label_values(d, job)' },
        ],
      },
    });
    assert.deepEqual(exprs, [
      { where: 'd.json: panel "A" target A', expr: 'a' },
      { where: 'd.json: panel "Inner" target A', expr: 'b' },
      { where: 'd.json: variable realm', expr: 'c{job="x"}' },
      { where: 'd.json: variable old', expr: 'd' },
    ]);
  });

  it('reads one-line and block expressions of a rule file', () => {
    const text = [
      'groups:',
      '  - name: g',
      '    rules:',
      '      - record: job:a:rate5m',
      '        expr: sum by (job) (rate(a_total[5m]))',
      '      - alert: B',
      '        expr: |',
      '          job:a:rate5m > 1',
      '          and',
      '          b == 0',
      '        for: 5m',
      "      - alert: C",
      "        expr: 'c{x=\"y\"} > 0'",
    ].join('\n');
    assert.deepEqual(ruleExprs(text), [
      { kind: 'record', name: 'job:a:rate5m', expr: 'sum by (job) (rate(a_total[5m]))' },
      { kind: 'alert', name: 'B', expr: 'job:a:rate5m > 1 and b == 0' },
      { kind: 'alert', name: 'C', expr: 'c{x="y"} > 0' },
    ]);
  });

  it('fails with the install command when promtool is missing', () => {
    const script = `import('${new URL('../support/tools.js', import.meta.url).href}').then((m) => m.findPromtool())`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { LOCUS_TOOLS_DIR: '/nonexistent-locus-tools', PATH: '' },
      encoding: 'utf8',
    });
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /promtool not found \(looked in \/nonexistent-locus-tools\/bin[^)]*\); install with: bash scripts\/install-tools\.sh/);
  });
});
