/**
 * deploy/prometheus and deploy/grafana checked by the real promtool (issue #22): the rule files
 * pass `promtool check rules`, their unit tests pass `promtool test rules` and cover every alert
 * firing and not firing, and every PromQL expression of the rules and dashboards parses and names
 * only metrics the service exports (the catalogue, prom-client defaults, our recording rules, or
 * the kube-state-metrics metrics listed in test/support/promql.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { catalogueNames, operatorCatalogueNames } from '../../internal/observability/metric-catalogue.js';
import {
  dashboardExprs,
  metricNames,
  promtool,
  promtoolParseErrors,
  readRepoFile,
  repoRoot,
  ruleExprs,
  substituteGrafanaVariables,
  unknownMetric,
  type RuleExpr,
  type SourcedExpr,
} from '../support/promql.js';
import { findPromtool } from '../support/tools.js';

const rulesDir = 'deploy/prometheus';
const ruleTestsDir = 'deploy/prometheus/tests';
const dashboardsDir = 'deploy/grafana';

function filesIn(dir: string, ext: string): string[] {
  return readdirSync(join(repoRoot, dir))
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => join(dir, f));
}

const ruleFiles = filesIn(rulesDir, '.yaml');
const ruleTestFiles = filesIn(ruleTestsDir, '.yaml');
const dashboardFiles = filesIn(dashboardsDir, '.json');
const rules: RuleExpr[] = ruleFiles.flatMap((f) => ruleExprs(readRepoFile(f)));
const alerts = rules.filter((r) => r.kind === 'alert');
const recorded = new Set(rules.filter((r) => r.kind === 'record').map((r) => r.name));

/** Metric-name problems of `exprs`, one message per unknown name. */
function unknownNames(exprs: readonly SourcedExpr[]): string[] {
  const problems: string[] = [];
  for (const { where, expr } of exprs) {
    const names = metricNames(expr);
    if (names.length === 0) problems.push(`${where}: names no metric: ${expr}`);
    for (const name of names) {
      const why = unknownMetric(name, recorded);
      if (why !== null) problems.push(`${where}: ${why}`);
    }
  }
  return problems;
}

describe('deploy/prometheus and deploy/grafana (promtool)', () => {
  before(() => {
    // Fails every test here with the install command when promtool is missing.
    findPromtool();
  });

  it('has rule files, rule tests and dashboards to check', () => {
    assert.deepEqual(ruleFiles, ['deploy/prometheus/locus-alerts.yaml']);
    assert.ok(ruleTestFiles.length >= 4, `rule tests: ${ruleTestFiles.join(', ')}`);
    assert.deepEqual(dashboardFiles, ['deploy/grafana/locus-operator.json', 'deploy/grafana/locus-overview.json', 'deploy/grafana/locus-realm.json']);
    // The light rule reader must see every rule promtool sees.
    const text = ruleFiles.map(readRepoFile).join('\n');
    assert.equal(rules.length, (text.match(/^\s*-\s+(record|alert):/gm) ?? []).length);
    assert.deepEqual(alerts.map((a) => a.name).sort(), [
      'LocusBusDisconnected',
      'LocusEventLoopLagHigh',
      'LocusHTTPErrorRatioHigh',
      'LocusInstructionSuspended',
      'LocusLatencyBudgetBurnFast',
      'LocusLatencyBudgetBurnSlow',
      'LocusOperatorNoLeader',
      'LocusOperatorReconcileErrors',
      'LocusPodRestarting',
      'LocusProcessRestarting',
      'LocusStoreUnavailable',
      'LocusV1ActionErrorRatioHigh',
    ]);
  });

  it('promtool check rules accepts the rule files', () => {
    const run = promtool(['check', 'rules', ...ruleFiles]);
    assert.equal(run.status, 0, run.output);
    assert.match(run.output, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  it('promtool test rules passes every alert unit test', () => {
    const run = promtool(['test', 'rules', ...ruleTestFiles]);
    assert.equal(run.status, 0, run.output);
    assert.doesNotMatch(run.output, /FAILED/);
  });

  it('tests every alert both firing and not firing', () => {
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const file of ruleTestFiles) {
      const lines = readRepoFile(file).split('\n');
      lines.forEach((line, i) => {
        const name = /^\s*alertname:\s*(\S+)\s*$/.exec(line)?.[1];
        if (name === undefined) return;
        const next = lines[i + 1] ?? '';
        if (/^\s*exp_alerts:\s*\[\]\s*$/.test(next)) quiet.add(name);
        else if (/^\s*exp_alerts:\s*$/.test(next) && /^\s*-\s*exp_labels:/.test(lines[i + 2] ?? '')) firing.add(name);
      });
    }
    for (const { name } of alerts) {
      assert.ok(firing.has(name), `no test in ${ruleTestsDir} where ${name} fires`);
      assert.ok(quiet.has(name), `no test in ${ruleTestsDir} where ${name} does not fire`);
    }
  });

  it('gives every alert a severity, a summary, a description and a runbook that exists', () => {
    const text = ruleFiles.map(readRepoFile).join('\n');
    const operations = readRepoFile('docs/operations.md');
    const anchors = new Set(
      [...operations.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
        (m[1] ?? '').trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-'),
      ),
    );
    for (const block of text.split(/^\s*-\s+alert:\s*/m).slice(1)) {
      const name = block.split('\n')[0]?.trim() ?? '';
      assert.match(block, /\n\s+severity:\s*(critical|warning)\s*\n/, `${name}: severity critical or warning`);
      assert.match(block, /\n\s+summary:\s*\S/, `${name}: summary`);
      assert.match(block, /\n\s+description:\s*\S/, `${name}: description`);
      const runbook = /\n\s+runbook_url:\s*docs\/operations\.md#(\S+)/.exec(block)?.[1];
      assert.ok(runbook !== undefined, `${name}: runbook_url into docs/operations.md`);
      assert.ok(anchors.has(runbook), `${name}: docs/operations.md has no heading for #${runbook}`);
    }
  });

  it('names only metrics the service exports in the rules', () => {
    const exprs = rules.map((r) => ({ where: `${rulesDir}: ${r.kind} ${r.name}`, expr: r.expr }));
    assert.deepEqual(unknownNames(exprs), []);
    // Each recorded name is a level:metric:operations name, and no rule records a catalogue name.
    for (const name of recorded) assert.match(name, /^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$/, name);
  });

  describe('dashboards', () => {
    const dashboards = dashboardFiles.map((file) => ({ file, json: JSON.parse(readFileSync(join(repoRoot, file), 'utf8')) as Record<string, unknown> }));
    const exprs: SourcedExpr[] = dashboards.flatMap(({ file, json }) =>
      dashboardExprs(file, json).map((e) => ({ where: e.where, expr: substituteGrafanaVariables(e.expr) })),
    );

    it('are Grafana dashboards with a uid, a title, tags and a prometheus datasource variable', () => {
      const uids = new Set<string>();
      for (const { file, json } of dashboards) {
        assert.equal(typeof json.uid, 'string', file);
        assert.ok(!uids.has(json.uid as string), `${file}: duplicate uid`);
        uids.add(json.uid as string);
        assert.equal(typeof json.title, 'string', file);
        assert.ok(Array.isArray(json.tags) && json.tags.includes('locus'), `${file}: tag locus`);
        assert.ok(typeof json.schemaVersion === 'number' && json.schemaVersion >= 36, `${file}: schemaVersion`);
        const vars = (json.templating as { list: { name: string; type: string; query: unknown }[] }).list;
        assert.ok(vars.some((v) => v.name === 'datasource' && v.type === 'datasource' && v.query === 'prometheus'), `${file}: datasource variable`);
        const text = JSON.stringify(json);
        for (const uid of text.matchAll(/"datasource":\{"type":"prometheus","uid":"([^"]*)"\}/g)) {
          assert.equal(uid[1], '${datasource}', `${file}: every prometheus query uses the datasource variable`);
        }
      }
    });

    it('lay their panels out on the 24-column grid without overlaps, with unique ids', () => {
      for (const { file, json } of dashboards) {
        type P = { id: number; title?: string; gridPos: { x: number; y: number; w: number; h: number }; panels?: P[] };
        const all: P[] = [];
        const walk = (panels: P[] | undefined): void => {
          for (const p of panels ?? []) {
            all.push(p);
            walk(p.panels);
          }
        };
        walk(json.panels as P[]);
        assert.equal(new Set(all.map((p) => p.id)).size, all.length, `${file}: panel ids unique`);
        const taken = new Map<string, string>();
        for (const p of all) {
          const { x, y, w, h } = p.gridPos;
          assert.ok(x >= 0 && w > 0 && x + w <= 24 && h > 0, `${file}: "${p.title}" fits the grid`);
          for (let row = y; row < y + h; row++) {
            for (let col = x; col < x + w; col++) {
              const other = taken.get(`${row},${col}`);
              assert.equal(other, undefined, `${file}: "${p.title}" overlaps "${other}"`);
              taken.set(`${row},${col}`, p.title ?? '?');
            }
          }
        }
      }
    });

    it('have queries in every panel, rows included', () => {
      assert.ok(exprs.length >= 40, `only ${exprs.length} expressions`);
      for (const { file, json } of dashboards) {
        for (const panel of json.panels as { type: string; title: string; targets?: { expr?: string }[] }[]) {
          if (panel.type === 'row' || panel.type === 'text') continue;
          assert.ok((panel.targets ?? []).length > 0 && panel.targets?.every((t) => typeof t.expr === 'string' && t.expr !== ''), `${file}: "${panel.title}" has queries`);
        }
      }
      const overview = exprs.filter((e) => e.where.includes('locus-overview'));
      const realm = exprs.filter((e) => e.where.includes('locus-realm'));
      assert.ok(overview.some((e) => e.where.includes('variable instance')));
      assert.ok(realm.some((e) => e.where.includes('variable realm') && metricNames(e.expr).includes('locus_locations_ingested_total')));
      assert.ok(realm.some((e) => metricNames(e.expr).includes('locus_geofence_events_total') && e.expr.includes('realm=~"fleet"')));
    });

    it('parse with promtool, each on its own', () => {
      assert.deepEqual(promtoolParseErrors(exprs), []);
    });

    it('name only metrics the service exports', () => {
      assert.deepEqual(unknownNames(exprs), []);
    });

    it('cover every metric of the catalogue, the operator\'s too', () => {
      const named = new Set(exprs.flatMap((e) => metricNames(e.expr)).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
      const rulesNamed = new Set(rules.flatMap((r) => metricNames(r.expr)).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
      const missing = [...catalogueNames(), ...operatorCatalogueNames()].filter((name) => !named.has(name) && !rulesNamed.has(name));
      assert.deepEqual(missing, []);
    });
  });

  it('reports an expression promtool rejects, naming where it came from', () => {
    const errors = promtoolParseErrors([
      { where: 'good', expr: 'sum(rate(locus_http_requests_total[5m]))' },
      { where: 'dashboard.json: panel "Broken" target A', expr: 'sum(rate(locus_http_requests_total[5m])' },
    ]);
    assert.ok(errors[0]?.startsWith('dashboard.json: panel "Broken" target A: promtool cannot parse'), errors.join('\n'));
    assert.ok(!errors.some((e) => e.startsWith('good:')), errors.join('\n'));
  });
});
