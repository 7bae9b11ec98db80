/**
 * What the deploy/ tests need to hold dashboards and rule files to the metric catalogue: the
 * PromQL expressions of a Grafana dashboard and of a Prometheus rule file, Grafana's variables
 * replaced by valid values, the metric names an expression reads, and promtool to parse them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_METRIC_PREFIXES, METRICS, OPERATOR_METRICS } from '../../internal/observability/metric-catalogue.js';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { findPromtool } from './tools.js';

/** The repository root (tests run from dist/test/...). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** One PromQL expression and where it came from. */
export interface SourcedExpr {
  /** e.g. `locus-overview.json: panel "Request rate" target A`. */
  where: string;
  expr: string;
}

/**
 * Metrics of kube-state-metrics the rules and dashboards may read (they are not the service's,
 * but every Kubernetes monitoring stack has them).
 */
export const KUBE_STATE_METRICS = ['kube_pod_container_status_restarts_total'] as const;

/** Grafana's built-in and dashboard variables, replaced by values PromQL accepts where they stand. */
const grafanaVariables: [RegExp, string][] = [
  [/\$__rate_interval\b|\$\{__rate_interval\}/g, '1m'],
  [/\$__interval\b|\$\{__interval\}/g, '30s'],
  [/\$__range\b|\$\{__range\}/g, '1h'],
  [/\$\{datasource\}|\$datasource\b/g, 'prometheus'],
  [/\$\{realm(?::[a-z]+)?\}|\$realm\b/g, 'fleet'],
  [/\$\{job(?::[a-z]+)?\}|\$job\b/g, 'locus'],
  [/\$\{instance(?::[a-z]+)?\}|\$instance\b/g, '10.0.0.1:8080'],
];

/** `expr` with Grafana's variables replaced; throws naming a variable it does not know. */
export function substituteGrafanaVariables(expr: string): string {
  let out = expr;
  for (const [pattern, value] of grafanaVariables) out = out.replace(pattern, value);
  const left = /\$\{?[A-Za-z_][A-Za-z0-9_]*/.exec(out);
  if (left !== null) throw new Error(`unknown Grafana variable ${left[0]} in: ${expr}`);
  return out;
}

interface Panel {
  title?: string;
  targets?: { expr?: string; refId?: string }[];
  panels?: Panel[];
}

interface Dashboard {
  panels?: Panel[];
  templating?: { list?: { name?: string; query?: string | { query?: string } }[] };
}

/** Grafana template queries that are not PromQL: `label_values(metric, label)` and friends name a metric. */
function templateQueryExpr(query: string): string {
  const labelValues = /^\s*label_values\(\s*(.+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$/.exec(query);
  if (labelValues?.[1] !== undefined) return labelValues[1];
  const queryResult = /^\s*query_result\(\s*(.+)\s*\)\s*$/.exec(query);
  if (queryResult?.[1] !== undefined) return queryResult[1];
  return query;
}

/** Every PromQL expression of a dashboard: panel targets (rows' nested panels too) and templating queries. */
export function dashboardExprs(file: string, json: unknown): SourcedExpr[] {
  const dashboard = json as Dashboard;
  const out: SourcedExpr[] = [];
  const walk = (panels: Panel[] | undefined): void => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (typeof target.expr === 'string') {
          out.push({ where: `${file}: panel "${panel.title ?? '?'}" target ${target.refId ?? '?'}`, expr: target.expr });
        }
      }
      walk(panel.panels);
    }
  };
  walk(dashboard.panels);
  for (const variable of dashboard.templating?.list ?? []) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    if (typeof query === 'string' && query.includes('(')) {
      out.push({ where: `${file}: variable ${variable.name ?? '?'}`, expr: templateQueryExpr(query) });
    }
  }
  return out;
}

/** A rule of a Prometheus rule file: its name (record or alert) and expression. */
export interface RuleExpr {
  kind: 'record' | 'alert';
  name: string;
  expr: string;
}

/**
 * The rules of a rule file written as deploy/prometheus writes them: `- record:`/`- alert:`
 * followed by `expr:` on one line or as a `|` block. (Not a YAML parser; the test that uses it
 * also has promtool check the file, and compares rule counts.)
 */
export function ruleExprs(text: string): RuleExpr[] {
  const lines = text.split('\n');
  const rules: RuleExpr[] = [];
  let current: { kind: 'record' | 'alert'; name: string } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const head = /^\s*-\s+(record|alert):\s*(\S+)\s*$/.exec(line);
    if (head !== null) {
      current = { kind: head[1] as 'record' | 'alert', name: head[2] ?? '' };
      continue;
    }
    const expr = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (expr === null || current === null) continue;
    const indent = (expr[1] ?? '').length;
    let value = (expr[2] ?? '').trim();
    if (value === '|' || value === '>') {
      const block: string[] = [];
      while (i + 1 < lines.length) {
        const next = lines[i + 1] ?? '';
        if (next.trim() !== '' && next.length - next.trimStart().length <= indent) break;
        block.push(next.trim());
        i++;
      }
      value = block.join(' ').trim();
    } else if (value.startsWith("'") && value.endsWith("'")) {
      value = value.slice(1, -1).replaceAll("''", "'");
    }
    rules.push({ ...current, expr: value });
    current = null;
  }
  return rules;
}

const keywords = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset',
  'inf', 'nan', 'atan2', 'start', 'end',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not functions, keywords,
 * label names (in braces or grouping clauses) or inside strings. `{__name__="x"}` counts too.
 */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/__name__\s*=\s*"([^"]+)"/g)) if (m[1] !== undefined) names.add(m[1]);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  for (const m of stripped.matchAll(/(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = m[0];
    const isCall = /^\s*\(/.test(stripped.slice(m.index + name.length));
    if (!isCall && !keywords.has(name.toLowerCase())) names.add(name);
  }
  return [...names].sort();
}

/** Every metric name the service exports by itself: the catalogue, histograms as their three series. */
export function catalogueSeriesNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of [...Object.values(METRICS), ...Object.values(OPERATOR_METRICS)]) {
    names.add(metric.name);
    if (metric.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

/**
 * prom-client's default metrics as the service exports them (histograms as their three series):
 * what collectDefaultMetrics registers, less the three gauges named like counters that the
 * service leaves out (docs/operations.md, "Metrics").
 */
export function defaultSeriesNames(): Set<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    const name = (metric as unknown as { name: string }).name;
    if (['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'].includes(name)) continue;
    names.add(name);
    if (metric instanceof Histogram) for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

let defaults: Set<string> | undefined;

/** Why `name` is not a metric the service (or its recording rules, or kube-state-metrics) exports, or null when it is. */
export function unknownMetric(name: string, recorded: ReadonlySet<string>): string | null {
  if (catalogueSeriesNames().has(name)) return null;
  defaults ??= defaultSeriesNames();
  if (defaults.has(name)) return null;
  if (recorded.has(name)) return null;
  if ((KUBE_STATE_METRICS as readonly string[]).includes(name)) return null;
  return `${name} is not in internal/observability/metric-catalogue.ts, not a prom-client default metric (${DEFAULT_METRIC_PREFIXES.join(', ')}), not recorded by deploy/prometheus and not a listed kube-state-metrics metric`;
}

export interface PromtoolResult {
  status: number | null;
  output: string;
}

/** Runs promtool with `args`; throws a clear error when it is not installed. */
export function promtool(args: string[], cwd = repoRoot): PromtoolResult {
  const run = spawnSync(findPromtool(), args, { cwd, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/**
 * Has promtool parse each expression as a recording rule of its own (`check_expr_<n>`), and
 * returns one message per expression it rejects, naming where it came from.
 */
export function promtoolParseErrors(exprs: readonly SourcedExpr[]): string[] {
  if (exprs.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'locus-promql-'));
  try {
    const file = join(dir, 'exprs.yaml');
    // JSON is YAML: no quoting rules to get wrong.
    const rules = exprs.map((e, i) => ({ record: `check_expr_${i}`, expr: e.expr }));
    writeFileSync(file, JSON.stringify({ groups: [{ name: 'exprs', rules }] }, null, 1));
    const run = promtool(['check', 'rules', file], dir);
    if (run.status === 0) return [];
    const errors: string[] = [];
    exprs.forEach((e, i) => {
      if (new RegExp(`check_expr_${i}\\b`).test(run.output) || new RegExp(`rule ${i + 1}\\b`).test(run.output)) {
        errors.push(`${e.where}: promtool cannot parse ${JSON.stringify(e.expr)}`);
      }
    });
    if (errors.length === 0) errors.push(`promtool check rules failed (exit ${String(run.status)}):\n${run.output}`);
    else errors.push(`promtool said:\n${run.output}`);
    return errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A file of the repository as text. */
export function readRepoFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}
