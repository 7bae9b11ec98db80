/**
 * A process writing an SQLite store shared with another one (store-owner.ts `shared`), for
 * test/integration/sqlite-shared.test.ts. Arguments: the file, this writer's name (`a`
 * or `b`), the number of rounds. Each round writes, in one batch, a fix to each of the
 * common objects `common-0..COMMON-1` and to this writer's own objects; fix times are
 * distinct between writers (a: even milliseconds, b: odd). Then, once the other writer is
 * done too (its object `done-<name>` exists), it checks that an update sees the other's
 * last state (RecentObjects dropped after the other's commits), prunes the history before
 * a cut (both writers prune the same realm at once), and searches the words each writer
 * wrote. Prints one JSON line: what it saw, and every error.
 */
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import type { ObjectPatch } from '../../internal/domain/types.js';

export const COMMON = 10;
export const OWN = 20;
export const REALM = 'shared';
export const BASE_MS = Date.parse('2024-05-01T10:00:00.000Z');
/** Fixes before this time are pruned by both writers at the end. */
export const CUT_ROUND = 20;

export interface WriterReport {
  name: string;
  errors: string[];
  /** Common objects whose update's `old` differed from the state read from the file. */
  stale: string[];
  pruned: number;
  /** Ids found by searching each writer's word. */
  found: Record<string, string[]>;
}

const time = (round: number, writer: string): string => new Date(BASE_MS + round * 2 + (writer === 'a' ? 0 : 1)).toISOString();

async function main(): Promise<void> {
  const [file, name, roundsText] = process.argv.slice(2) as [string, string, string];
  const rounds = Number(roundsText);
  const other = name === 'a' ? 'b' : 'a';
  const errors: string[] = [];
  const store = openSqliteStore(file, { ownership: 'shared', onIndexerError: (err: unknown) => errors.push(`indexer: ${err instanceof Error ? err.message : JSON.stringify(err)}`) });
  const report: WriterReport = { name, errors, stale: [], pruned: 0, found: {} };
  try {
    // Both writers open a new file at once (migrations) and put the realm.
    await store.realms.put(REALM, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, new Date(BASE_MS).toISOString());
    const now = new Date(BASE_MS + 3_600_000).toISOString();
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < rounds; round++) {
      const at = time(round, name);
      const patches: ObjectPatch[] = [];
      for (let i = 0; i < COMMON; i++) patches.push({ id: `common-${i}`, location: { longitude: round / 100, latitude: i, time: at }, data: { [`by_${name}`]: round } });
      for (let i = 0; i < OWN; i++) patches.push({ id: `${name}-${i}`, location: { longitude: round / 100, latitude: i, time: at }, data: { word: `word${name}` } });
      writes.push(store.objects.upsertMany(REALM, patches, now).catch((err: Error) => errors.push(`write ${round}: ${err.message}`)));
      // A few batches per turn of the event loop: group commits of several writes.
      if (round % 4 === 3) {
        await Promise.all(writes.splice(0));
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    await Promise.all(writes);
    await store.objects.upsertMany(REALM, [{ id: `done-${name}` }], now);
    // Until the other writer is done too.
    const deadline = Date.now() + 60_000;
    while ((await store.objects.get(REALM, `done-${other}`)) === null) {
      if (Date.now() > deadline) throw new Error(`writer ${other} never finished`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Each common object was last written by whichever writer came last: an update must
    // see that state, not this writer's own last write held in memory.
    for (let i = 0; i < COMMON; i++) {
      const id = `common-${i}`;
      const stored = await store.objects.get(REALM, id);
      const [change] = await store.objects.upsertMany(REALM, [{ id, mustExist: true, data: { [`checked_${name}`]: true } }], now);
      if (JSON.stringify(change?.old?.location) !== JSON.stringify(stored?.location) || JSON.stringify(change?.old?.data) !== JSON.stringify(stored?.data)) {
        // The other writer's check may land between the two reads: only a location or data older than the stored one is stale.
        const otherChecked = stored?.data[`checked_${other}`] === true || change?.old?.data[`checked_${other}`] === true;
        if (!otherChecked) report.stale.push(id);
      }
    }
    report.pruned = await store.objects.pruneHistory(REALM, time(CUT_ROUND, 'a'));
    for (const writer of ['a', 'b']) {
      const hits = await store.objects.search(REALM, { words: [`word${writer}`], limit: 100, fields: null });
      report.found[writer] = hits.map((hit) => hit.object.id).sort();
    }
  } catch (err) {
    errors.push(err instanceof Error ? err.message : String(err));
  } finally {
    await store.close();
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

// Run as a script only (the test imports the constants above).
if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
