/**
 * History in chunks (history-chunks.ts) with many fixes per object: pages read chunk by
 * chunk and stop once they know their fixes, late fixes and repeated times rewrite the
 * chunks that hold them, retention cuts chunks across its cut. Every page is compared with
 * an oracle of the write and retention rules, over stores with small chunk limits (so
 * that an object has hundreds of chunks).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Location, ObjectPatch } from '../../internal/domain/types.js';
import { assertHistoryPages, historyStores } from '../support/history-stores.js';

const NOW = '2024-05-01T12:00:00.000Z';
const BASE = Date.parse('2024-05-01T10:00:00.000Z');
const time = (offset: number): string => new Date(BASE + offset).toISOString();

const stores = historyStores([
  { held: 1, span: 40, fixes: 3 },
  { held: 3, span: 0, fixes: 2 },
  { held: 8, span: 500, fixes: 64 },
]);
after(async () => {
  for (const { store } of stores) await store.close();
});

let realms = 0;

void describe('history in chunks', () => {
  for (const { name, store } of stores) {
    void it(`pages of long histories (${name}) hold the fixes the write and retention rules leave`, async () => {
      const write = fc.record({
        kind: fc.constant('write' as const),
        // Mostly in order, some late and some repeated times.
        start: fc.integer({ min: 0, max: 3000 }),
        steps: fc.array(fc.integer({ min: -30, max: 40 }), { minLength: 1, maxLength: 40 }),
      });
      const prune = fc.record({ kind: fc.constant('prune' as const), cut: fc.integer({ min: 0, max: 3500 }) });
      const query = fc.record({
        order: fc.constantFrom('asc' as const, 'desc' as const),
        from: fc.option(fc.integer({ min: 0, max: 3500 }), { nil: undefined }),
        to: fc.option(fc.integer({ min: 0, max: 3500 }), { nil: undefined }),
        limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 60 })),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof({ weight: 8, arbitrary: write }, { weight: 1, arbitrary: prune }), { minLength: 1, maxLength: 20 }),
          fc.array(query, { minLength: 1, maxLength: 8 }),
          async (ops, queries) => {
            const realm = `r${++realms}`;
            // Oracle: the fixes by time; a later write of an equal time replaces the earlier.
            const oracle = new Map<string, Location>();
            let writes = 0;
            for (const op of ops) {
              if (op.kind === 'write') {
                let at = op.start;
                const patches: ObjectPatch[] = op.steps.map((step) => {
                  at = Math.max(0, at + step);
                  return { id: 'o', location: { longitude: ++writes / 1000, latitude: 1, speed: writes % 7, time: time(at) } };
                });
                await store.objects.upsertMany(realm, patches, NOW);
                for (const patch of patches) oracle.set((patch.location as Location).time, patch.location as Location);
              } else {
                const cut = time(op.cut);
                let expected = 0;
                for (const fixTime of [...oracle.keys()]) {
                  if (fixTime < cut) {
                    oracle.delete(fixTime);
                    expected++;
                  }
                }
                assert.equal(await store.objects.pruneHistory(realm, cut), expected, `fixes pruned before ${cut}`);
              }
            }
            for (const q of queries) {
              const from = q.from === undefined ? undefined : time(q.from);
              const to = q.to === undefined ? undefined : time(q.to);
              await assertHistoryPages(store, realm, 'o', oracle.values(), { order: q.order, limit: q.limit, from, to }, `${q.order} from ${from ?? '-'} to ${to ?? '-'} by ${q.limit}`);
            }
          },
        ),
        { numRuns: 100 },
      );
    });
  }
});
