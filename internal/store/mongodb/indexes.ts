/**
 * The indexes of the MongoDB store, as values (IndexSpecs), and their idempotent creation:
 * createIndexes with the same keys and options is a no-op, so every start and every
 * provisioning of a realm runs them again.
 */
import type { Db, IndexDescription } from 'mongodb';

export const SECONDS_PER_DAY = 86_400;
/** The history TTL index's name (its expiry follows the realm's historyRetentionDays). */
export const HISTORY_TTL_INDEX = 'history_ttl';

/** The control database: realms by tenant and name, tokens by hash and realm, keys by tenant. */
export const CONTROL_INDEXES: Record<'realms' | 'tokens' | 'signing_keys', IndexDescription[]> = {
  realms: [{ key: { tenant: 1, name: 1 }, name: 'tenant_name', unique: true }],
  tokens: [
    { key: { hash: 1 }, name: 'hash', unique: true },
    { key: { realm: 1, created: 1, _id: 1 }, name: 'realm_created' },
  ],
  signing_keys: [{ key: { tenant: 1, created: 1, _id: 1 }, name: 'tenant_created' }],
};

/** A realm's database. */
export const REALM_INDEXES: Record<'objects' | 'areas' | 'history', IndexDescription[]> = {
  objects: [
    { key: { g: '2dsphere' }, name: 'location_2dsphere', '2dsphereIndexVersion': 3 },
    // Whole-word search over the label and string data values (operators' ad hoc $text queries).
    { key: { l: 'text', 'd.v': 'text' }, name: 'label_data_text', default_language: 'none', language_override: 'locus_no_language' },
    // Anchored prefix matches of the search words (queries.ts searchPipeline).
    { key: { wi: 1 }, name: 'words_id' },
    { key: { wl: 1 }, name: 'words_label' },
    { key: { 'd.w': 1 }, name: 'words_data' },
    // Filters on data keys and values.
    { key: { 'd.k': 1, 'd.v': 1 }, name: 'data_pairs' },
  ],
  areas: [{ key: { g: '2dsphere' }, name: 'geometry_2dsphere', '2dsphereIndexVersion': 3 }],
  history: [
    { key: { o: 1, t: 1 }, name: 'object_time', unique: true },
    { key: { t: 1 }, name: 'time' },
  ],
};

/**
 * A realm's instruction collections (instruction-store.ts): instructions in creation order,
 * members by incarnation and entry, the outbox oldest first. Made when the realm is given an
 * instruction, not with the realm: most realms have none, and each index is a file on the server.
 */
export const INSTRUCTION_INDEXES: Record<'instructions' | 'instruction_members' | 'instruction_pending', IndexDescription[]> = {
  instructions: [{ key: { order: 1 }, name: 'order' }],
  instruction_members: [{ key: { incarnation: 1, entry: 1 }, name: 'incarnation_entry', unique: true }],
  instruction_pending: [
    { key: { order: 1 }, name: 'order' },
    { key: { incarnation: 1 }, name: 'incarnation' },
  ],
};

export async function ensureControlIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(CONTROL_INDEXES)) await db.collection(collection).createIndexes(indexes);
}

export async function ensureInstructionIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INSTRUCTION_INDEXES)) await db.collection(collection).createIndexes(indexes);
}

/** The history TTL index for a retention in days (0: keep everything, no TTL index). */
export function historyTtlIndex(days: number): IndexDescription | null {
  if (days <= 0) return null;
  return { key: { at: 1 }, name: HISTORY_TTL_INDEX, expireAfterSeconds: Math.min(2_147_483_647, Math.round(days * SECONDS_PER_DAY)) };
}

/** Creates a realm database's indexes (idempotent) and sets its history TTL from `retentionDays` (null: leave it). */
export async function ensureRealmIndexes(db: Db, retentionDays: number | null): Promise<void> {
  for (const [collection, indexes] of Object.entries(REALM_INDEXES)) await db.collection(collection).createIndexes(indexes);
  if (retentionDays !== null) await syncHistoryTtl(db, retentionDays);
}

/** Makes the history TTL index match the retention: created, changed in place (collMod) or dropped. */
export async function syncHistoryTtl(db: Db, retentionDays: number): Promise<void> {
  const wanted = historyTtlIndex(retentionDays);
  const history = db.collection('history');
  const indexes = (await history.listIndexes().toArray()) as { name?: string; expireAfterSeconds?: number }[];
  const existing = indexes.find((index) => index.name === HISTORY_TTL_INDEX);
  if (wanted === null) {
    if (existing !== undefined) await history.dropIndex(HISTORY_TTL_INDEX);
    return;
  }
  if (existing === undefined) {
    await history.createIndexes([wanted]);
  } else if (existing.expireAfterSeconds !== wanted.expireAfterSeconds) {
    await db.command({ collMod: 'history', index: { name: HISTORY_TTL_INDEX, expireAfterSeconds: wanted.expireAfterSeconds } });
  }
}
