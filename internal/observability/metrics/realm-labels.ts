/**
 * The `realm` label value of a realm (storage key): its readable name (tenant/name), for at
 * most `maxRealms` distinct realms per process; every realm after those is `_other`, so the
 * series a process exports stay bounded whatever the number of tenants.
 */
import { realmLabel } from '../../domain/realm-key.js';

export const OTHER_REALMS = '_other';

export class RealmLabels {
  private readonly labels = new Map<string, string>();

  constructor(private readonly maxRealms: number) {}

  of(realm: string): string {
    const known = this.labels.get(realm);
    if (known !== undefined) return known;
    if (this.labels.size >= this.maxRealms) return OTHER_REALMS;
    const label = realmLabel(realm);
    this.labels.set(realm, label);
    return label;
  }
}

/** Realms whose cells a RealmCells keeps at hand; the others' are made again per call. */
const maxCachedRealms = 10_000;

/**
 * The cells a feeder counts a realm's work in, made at the realm's first use from its label
 * (`make(label)`) and kept at hand; with the realm label off (`labels` null), one set for all
 * realms (`make()`).
 */
export class RealmCells<C> {
  private readonly byRealm = new Map<string, C>();
  private readonly all: C | null;

  constructor(
    private readonly labels: RealmLabels | null,
    private readonly make: (...realmLabel: string[]) => C,
  ) {
    this.all = labels === null ? make() : null;
  }

  of(realm: string): C {
    if (this.all !== null) return this.all;
    let cells = this.byRealm.get(realm);
    if (cells === undefined) {
      cells = this.make((this.labels as RealmLabels).of(realm));
      if (this.byRealm.size < maxCachedRealms) this.byRealm.set(realm, cells);
    }
    return cells;
  }

  /** A deleted realm: its cells are let go (its series keep their counts). */
  forget(realm: string): void {
    this.byRealm.delete(realm);
  }
}
