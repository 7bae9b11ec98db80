/**
 * History retention: the service class with an injected clock and scheduler, and the
 * server wiring (a pass at start-up).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Location, RealmSettings } from '../../internal/domain/types.js';
import { HistoryRetention, retentionIntervalMs, type Scheduler } from '../../internal/service/history-retention.js';
import type { Store } from '../../internal/store/port.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { adminToken, call, makeRealm, startHarness } from '../support/harness.js';

const DAY = 86_400_000;
const start = Date.parse('2026-03-01T00:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const fix = (ms: number): Location => ({ longitude: 1, latitude: 2, time: iso(ms) });
const settings = (historyRetentionDays: number): RealmSettings => ({ connectionTimeout: 120, historyRetentionDays, rateLimit: null });

async function times(store: Store, realm: string, id: string): Promise<string[]> {
  return (await store.objects.history(realm, id, { limit: 100, order: 'asc' })).items.map((e) => e.location.time);
}

/** A scheduler that runs only when the test says so. */
function manualScheduler(): { scheduler: Scheduler; tick: () => void; interval: () => number | null; cancelled: () => boolean } {
  let run: (() => void) | null = null;
  let every: number | null = null;
  let cancelled = false;
  return {
    scheduler: (fn, ms) => {
      run = fn;
      every = ms;
      return () => {
        cancelled = true;
      };
    },
    tick: () => run?.(),
    interval: () => every,
    cancelled: () => cancelled,
  };
}

void describe('history retention', () => {
  void it('prunes each realm by its own retention at start, then on every tick; 0 keeps everything', async () => {
    const store = openSqliteStore(':memory:');
    let now = start;
    try {
      await store.realms.put('short', settings(1), iso(now));
      await store.realms.put('month', settings(30), iso(now));
      await store.realms.put('forever', settings(0), iso(now));
      for (const realm of ['short', 'month', 'forever']) {
        await store.objects.upsertMany(
          realm,
          [
            { id: 'car', location: fix(start - 40 * DAY) },
            { id: 'car', location: fix(start - 2 * DAY) },
            { id: 'car', location: fix(start - DAY / 2) },
          ],
          iso(now),
        );
      }
      const manual = manualScheduler();
      const retention = new HistoryRetention(store, () => now, { scheduler: manual.scheduler });
      retention.start();
      assert.equal(manual.interval(), retentionIntervalMs);
      const first = await retention.runOnce(); // joins the pass that start() began
      assert.deepEqual(first.deleted, { month: 1, short: 2 });
      assert.deepEqual(await times(store, 'short', 'car'), [iso(start - DAY / 2)]);
      assert.deepEqual(await times(store, 'month', 'car'), [iso(start - 2 * DAY), iso(start - DAY / 2)]);
      assert.equal((await times(store, 'forever', 'car')).length, 3);

      // A day later the next tick removes what has aged past one day.
      now += DAY;
      manual.tick();
      const second = await retention.runOnce();
      assert.deepEqual(second.deleted, { month: 0, short: 1 });
      assert.deepEqual(await times(store, 'short', 'car'), []);
      // The object and its current location stay.
      assert.deepEqual((await store.objects.get('short', 'car'))?.location, fix(start - DAY / 2));

      await retention.stop();
      assert.equal(manual.cancelled(), true);
    } finally {
      await store.close();
    }
  });

  void it('the server prunes when it starts', async () => {
    let now = start;
    const h = await startHarness({}, () => now);
    try {
      const tokens = await makeRealm(h.url, 'fleet');
      const put = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { settings: { historyRetentionDays: 7 } } });
      assert.equal(put.status, 200);
      const bulk = await call(h.url, 'POST', '/v2/realm/fleet/object', {
        token: tokens.write,
        body: {
          objects: [
            { id: 'van', location: { longitude: 1, latitude: 2, time: iso(start - 10 * DAY) } },
            { id: 'van', location: { longitude: 1, latitude: 2, time: iso(start - DAY) } },
          ],
        },
      });
      assert.equal(bulk.status, 200);
      const history = async (): Promise<string[]> => {
        const res = await call(h.url, 'GET', '/v2/realm/fleet/object/van/history', { token: tokens.read });
        return (res.json as { locations: Location[] }).locations.map((l) => l.time);
      };
      assert.equal((await history()).length, 2);
      now += DAY;
      await h.restart();
      // The start-up pass runs in the background: wait for it.
      for (let i = 0; i < 100 && (await history()).length !== 1; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(await history(), [iso(start - DAY)]);
    } finally {
      await h.stop();
    }
  });
});
