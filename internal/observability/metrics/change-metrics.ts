/**
 * The change-stream listener of the metrics (service/changes.ts): locations ingested, per
 * realm while the realm label is on. One inc per write batch, whatever its size.
 */
import type { AreaChange, ObjectChange } from '../../domain/types.js';
import type { ChangeListener } from '../../service/changes.js';
import type { CounterCell, LeanCounter } from './lean-series.js';
import { RealmCells, type RealmLabels } from './realm-labels.js';

export class ChangeMetrics implements ChangeListener {
  private readonly cells: RealmCells<CounterCell>;

  /** `realms` null: the counter has no realm label. */
  constructor(ingested: LeanCounter, realms: RealmLabels | null) {
    this.cells = new RealmCells(realms, (...realm) => ingested.cell(...realm));
  }

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    let fixes = 0;
    for (let k = 0; k < changes.length; k++) fixes += (changes[k] as ObjectChange).history.length;
    if (fixes > 0) this.cells.of(realm).inc(fixes);
  }

  areaChanged(_realm: string, _change: AreaChange): void {
    // Areas are not counted.
  }

  realmDeleted(realm: string): void {
    this.cells.forget(realm);
  }
}
