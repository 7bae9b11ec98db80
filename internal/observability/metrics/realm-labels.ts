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
