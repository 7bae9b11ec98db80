/**
 * The instruction engine's metrics (instructions/engine/realm-engine.ts InstructionObserver):
 * evaluations by trigger, entries joined and left, actions by kind and outcome, evaluation
 * time, changes stopped at the depth limit, and per realm the lease held and the suspended
 * instructions, on the /metrics of the process that holds the realm. With the realm label off,
 * the two gauges count over every realm held here.
 */
import type { Gauge } from 'prom-client';
import type { ActionKind } from '../../instructions/engine/action-runner.js';
import type { EvaluationTrigger, InstructionObserver } from '../../instructions/engine/engine-observer.js';
import type { MetricsRegistry } from './registry.js';
import { RealmCells, type RealmLabels } from './realm-labels.js';
import type { CounterCell, HistogramCell } from './lean-series.js';

export class InstructionMetrics implements InstructionObserver {
  private readonly evaluations: RealmCells<Map<EvaluationTrigger, CounterCell>>;
  private readonly joinedLeft: RealmCells<{ joined: CounterCell; left: CounterCell }>;
  private readonly held = new Map<string, number>();
  private readonly suspendedByRealm = new Map<string, number>();
  private readonly leaseGauge: Gauge;
  private readonly suspendedGauge: Gauge;
  private readonly duration: HistogramCell;

  constructor(
    private readonly registry: MetricsRegistry,
    private readonly realms: RealmLabels | null,
  ) {
    const { counters, gauges, histograms } = registry;
    this.duration = histograms.instructionEvaluationDuration.cell();
    this.evaluations = new RealmCells(realms, (...realm) => {
      const cells = new Map<EvaluationTrigger, CounterCell>();
      for (const trigger of ['change', 'create', 'repair', 'tick'] as const) cells.set(trigger, counters.instructionEvaluations.cell(trigger, ...realm));
      return cells;
    });
    this.joinedLeft = new RealmCells(realms, (...realm) => ({
      joined: counters.instructionEntries.cell('joined', ...realm),
      left: counters.instructionEntries.cell('left', ...realm),
    }));
    // Series of the fixed label sets start at 0.
    for (const kind of ['set', 'delete', 'sendToUrl']) for (const outcome of ['ok', 'error']) counters.instructionActions.cell(kind, outcome);
    this.leaseGauge = gauges.instructionLeaseHeld;
    this.suspendedGauge = gauges.instructionsSuspended;
    if (realms === null) {
      this.leaseGauge.set(0);
      this.suspendedGauge.set(0);
    }
  }

  evaluated(realm: string, trigger: EvaluationTrigger, evaluations: number, seconds: number): void {
    if (evaluations > 0) this.evaluations.of(realm).get(trigger)?.inc(evaluations);
    this.duration.observe(seconds);
  }

  entries(realm: string, joined: number, left: number): void {
    const cells = this.joinedLeft.of(realm);
    if (joined > 0) cells.joined.inc(joined);
    if (left > 0) cells.left.inc(left);
  }

  action(kind: ActionKind, ok: boolean): void {
    this.registry.counters.instructionActions.cell(kind, ok ? 'ok' : 'error').inc();
  }

  depthLimited(): void {
    this.registry.counters.instructionDepthLimited.cell().inc();
  }

  leaseHeld(realm: string, held: boolean): void {
    this.setPerRealm(this.leaseGauge, this.held, realm, held ? 1 : 0);
  }

  suspended(realm: string, count: number): void {
    this.setPerRealm(this.suspendedGauge, this.suspendedByRealm, realm, count);
  }

  /** Sets a realm's value; the series shows the sum over the realms that share its label value. */
  private setPerRealm(gauge: Gauge, values: Map<string, number>, realm: string, value: number): void {
    if (value === 0) values.delete(realm);
    else values.set(realm, value);
    const label = this.realms === null ? null : this.realms.of(realm);
    let sum = 0;
    for (const [other, n] of values) if (label === null || (this.realms as RealmLabels).of(other) === label) sum += n;
    if (label === null) gauge.set(sum);
    else if (sum === 0) gauge.remove({ realm: label });
    else gauge.set({ realm: label }, sum);
  }
}
