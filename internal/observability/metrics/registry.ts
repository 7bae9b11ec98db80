/**
 * The registry of one API process, built from the catalogue (../metric-catalogue.ts): every
 * catalogue metric with exactly its name, type, help, labels and buckets (the `realm` label
 * left out while LOCUS_METRICS_REALM_LABEL is false), plus prom-client's default process and
 * Node.js metrics. Its own Registry, never prom-client's global one.
 *
 * Counters and histograms are lean-series.ts (cells cached by their feeders, read at scrape
 * time); gauges are prom-client Gauges, most of them computed at scrape time (collect()).
 */
import { collectDefaultMetrics, Gauge, Registry, type Metric } from 'prom-client';
import { METRICS, type MetricSpec } from '../metric-catalogue.js';
import { LeanCounter, LeanHistogram } from './lean-series.js';

type Catalogue = typeof METRICS;
type Key = keyof Catalogue;
type KeyOf<T extends MetricSpec['type']> = { [K in Key]: Catalogue[K]['type'] extends T ? K : never }[Key];
export type CounterKey = KeyOf<'counter'>;
export type HistogramKey = KeyOf<'histogram'>;
export type GaugeKey = KeyOf<'gauge'>;

export interface MetricsSettings {
  /** LOCUS_METRICS_REALM_LABEL: the `realm` label on the series the catalogue gives it. */
  realmLabel: boolean;
}

/** The label names a metric is registered with. */
export function labelsOf(spec: MetricSpec, settings: MetricsSettings): string[] {
  return spec.labels.filter((label) => settings.realmLabel || label !== 'realm');
}

let processDefaults: Registry | null = null;

/** prom-client defaults left out (see defaultMetrics). */
export const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;

/**
 * prom-client's default metrics (process_*, nodejs_*, the event-loop lag among them), once
 * per process: they describe the process, and each collection installs observers of its own.
 */
function defaultMetrics(): Registry {
  if (processDefaults === null) {
    processDefaults = new Registry();
    collectDefaultMetrics({ register: processDefaults });
    // Gauges named like counters, which Prometheus's linter refuses (promtool check metrics);
    // each is the sum of its labelled namesake (nodejs_active_handles and so on).
    for (const name of LINT_FAILING_DEFAULTS) processDefaults.removeSingleMetric(name);
  }
  return processDefaults;
}

export class MetricsRegistry {
  /** What /metrics serves: the catalogue's metrics and the default ones. */
  readonly registry: Registry;
  readonly counters: Record<CounterKey, LeanCounter>;
  readonly histograms: Record<HistogramKey, LeanHistogram>;
  readonly gauges: Record<GaugeKey, Gauge>;

  constructor(readonly settings: MetricsSettings) {
    const own = new Registry();
    const counters: Partial<Record<Key, LeanCounter>> = {};
    const histograms: Partial<Record<Key, LeanHistogram>> = {};
    const gauges: Partial<Record<Key, Gauge>> = {};
    for (const [key, spec] of Object.entries(METRICS) as [Key, MetricSpec][]) {
      const labels = labelsOf(spec, settings);
      switch (spec.type) {
        case 'counter': {
          const counter = new LeanCounter(spec.name, spec.help, labels);
          // A series without labels exists from the start (0), as prom-client's do.
          if (labels.length === 0) counter.cell();
          own.registerMetric(counter as unknown as Metric);
          counters[key] = counter;
          break;
        }
        case 'histogram': {
          const histogram = new LeanHistogram(spec.name, spec.help, labels, spec.buckets ?? []);
          if (labels.length === 0) histogram.cell();
          own.registerMetric(histogram as unknown as Metric);
          histograms[key] = histogram;
          break;
        }
        case 'gauge':
          gauges[key] = new Gauge({ name: spec.name, help: spec.help, labelNames: labels, registers: [own] });
          break;
      }
    }
    this.counters = counters as Record<CounterKey, LeanCounter>;
    this.histograms = histograms as Record<HistogramKey, LeanHistogram>;
    this.gauges = gauges as Record<GaugeKey, Gauge>;
    this.registry = Registry.merge([defaultMetrics(), own]);
  }

  /** Computes a gauge at scrape time (`this` is the gauge). */
  collectGauge(key: GaugeKey, collect: (gauge: Gauge) => void | Promise<void>): void {
    const gauge = this.gauges[key];
    (gauge as unknown as { collect: () => void | Promise<void> }).collect = () => collect(gauge);
  }

  /** The Prometheus text format of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
