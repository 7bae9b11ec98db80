/**
 * The change-stream listener of the metrics (service/changes.ts): locations ingested, per
 * realm while the realm label is on. One inc per write batch, whatever its size.
 */
import type { AreaChange, ObjectChange } from '../../domain/types.js';
import type { ChangeListener } from '../../service/changes.js';
import type { CounterCell, LeanCounter } from './lean-series.js';
import type { RealmLabels } from './realm-labels.js';

/** Realms whose cell is kept at hand; others look theirs up per batch. */
const maxCachedRealms = 10_000;

export class ChangeMetrics implements ChangeListener {
  private readonly byRealm = new Map<string, CounterCell>();
  private readonly all: CounterCell | null;

  /** `realms` null: the counter has no realm label. */
  constructor(
    private readonly ingested: LeanCounter,
    private readonly realms: RealmLabels | null,
  ) {
    this.all = realms === null ? ingested.cell() : null;
  }

  objectsChanged(realm: string, changes: readonly ObjectChange[]): void {
    let fixes = 0;
    for (let k = 0; k < changes.length; k++) fixes += (changes[k] as ObjectChange).history.length;
    if (fixes > 0) this.cellOf(realm).inc(fixes);
  }

  areaChanged(_realm: string, _change: AreaChange): void {
    // Areas are not counted.
  }

  realmDeleted(realm: string): void {
    // Its series keeps its count (counters never go down); the cached cell is let go.
    this.byRealm.delete(realm);
  }

  private cellOf(realm: string): CounterCell {
    if (this.all !== null) return this.all;
    let cell = this.byRealm.get(realm);
    if (cell === undefined) {
      cell = this.ingested.cell((this.realms as RealmLabels).of(realm));
      if (this.byRealm.size < maxCachedRealms) this.byRealm.set(realm, cell);
    }
    return cell;
  }
}
