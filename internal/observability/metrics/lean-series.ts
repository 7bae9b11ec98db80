/**
 * Counters and histograms cheap enough for the hot path. prom-client's own children hash
 * their label object at every inc() and observe(); here a caller asks once for the cell of
 * a label set (`cell(...)`, cached by the caller: per route, per action, per operation) and
 * then only adds numbers to it. prom-client's Registry reads the cells at scrape time
 * through the metric protocol it formats (`name`, `help`, `type`, `get()`), so the text
 * on /metrics is prom-client's.
 */

/** One exported sample, as prom-client's Registry formats it. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/** What prom-client's Registry reads from a metric at scrape time. */
export interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Sample[];
}

/** One label set of a counter. */
export class CounterCell {
  value = 0;

  inc(n = 1): void {
    this.value += n;
  }
}

/** One label set of a histogram: per-bucket counts (not cumulative), sum and count. */
export class HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  /** Records a value in the histogram's unit (`le` bounds are inclusive, as Prometheus has them). */
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    if (i < bounds.length) this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

interface Row<C> {
  labels: Record<string, string>;
  cell: C;
}

abstract class LeanSeries<C> {
  private readonly rows = new Map<string, Row<C>>();
  /** Runs before each scrape (series whose values are read from elsewhere). */
  collect: (() => void | Promise<void>) | null = null;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The cell of one label set (values in labelNames order); created at its first use. Cache it: this builds a key. */
  cell(...values: string[]): C {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} label values (${this.labelNames.join(', ')}), got ${values.length}`);
    }
    const key = values.join('\u0000');
    let row = this.rows.get(key);
    if (row === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((label, k) => (labels[label] = values[k] as string));
      row = { labels, cell: this.newCell() };
      this.rows.set(key, row);
    }
    return row.cell;
  }

  /** prom-client's Registry calls this at every scrape. */
  async get(): Promise<ScrapedMetric> {
    if (this.collect !== null) await this.collect();
    const values: Sample[] = [];
    for (const row of this.rows.values()) this.export(row, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.rows.clear();
  }

  /** The label sets in use (tests). */
  labelSets(): Record<string, string>[] {
    return [...this.rows.values()].map((row) => ({ ...row.labels }));
  }

  abstract readonly type: 'counter' | 'histogram';
  protected abstract newCell(): C;
  protected abstract export(row: Row<C>, out: Sample[]): void;
}

export class LeanCounter extends LeanSeries<CounterCell> {
  readonly type = 'counter';

  protected newCell(): CounterCell {
    return new CounterCell();
  }

  protected export(row: Row<CounterCell>, out: Sample[]): void {
    out.push({ labels: row.labels, value: row.cell.value, metricName: this.name });
  }
}

export class LeanHistogram extends LeanSeries<HistogramCell> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly string[], readonly buckets: readonly number[]) {
    super(name, help, labelNames);
  }

  protected newCell(): HistogramCell {
    return new HistogramCell(this.buckets);
  }

  protected export(row: Row<HistogramCell>, out: Sample[]): void {
    const { labels, cell } = row;
    let cumulative = 0;
    this.buckets.forEach((bound, k) => {
      cumulative += cell.counts[k] as number;
      out.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: cell.count, metricName: `${this.name}_bucket` });
    out.push({ labels, value: cell.sum, metricName: `${this.name}_sum` });
    out.push({ labels, value: cell.count, metricName: `${this.name}_count` });
  }
}
