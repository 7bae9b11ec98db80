/**
 * Presence as readers see it (compat section 6, decisions.md `connectionStatus`): an object is
 * `con` while at least one open, authenticated connection whose credentials declare it the
 * object's data provider (JWT `dpv`) is open, else `dis`. Object reads, lists and pushes ask
 * this port; the registry that answers it lives in service/presence-registry.ts.
 */
import type { ConnectionStatus } from '../domain/types.js';

export interface PresenceLookup {
  /** The status of object `id` of the realm with storage key `realm` (types.ts Realm.id). */
  statusOf(realm: string, id: string): ConnectionStatus;
}

/** No presence connections at all: every object is `dis`. */
export const noPresence: PresenceLookup = { statusOf: () => 'dis' };
