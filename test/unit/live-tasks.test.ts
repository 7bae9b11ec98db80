/**
 * Task subscriptions in the live engine (service/live/realm-tasks.ts), without sockets: a real
 * SQLite store, the local bus, TaskService publishing `tsk` events, fake connections. What a
 * write pushes, what a lost event costs (resync pushes the difference), changes heard while
 * the set is loading, and the release of the realm once the last task subscription goes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TaskRecord } from '../../internal/domain/task.js';
import { TaskService } from '../../internal/service/tasks.js';
import { FakeConnection, liveFixture, sleep, type LiveFixture } from '../support/live-fixture.js';
import { createSubscription } from '../../internal/transport/actions/subscription-options.js';

const N0 = '2026-01-01T00:00:00.000Z';

function task(id: string, label: string): TaskRecord {
  return { id, label, description: null, status: '$hkt_not_started', steps: [], targetId: 'van', location: null, data: {}, created: N0, updated: N0 };
}

type Push = { typ: string; id: string; uty: string; tsk: Record<string, Record<string, { lab?: string }>> };

/** The pushes of the connection once at least `n` have come (polling: the machine may be slow), taken. */
async function pushes(conn: FakeConnection, n = 1, timeoutMs = 2000): Promise<Push[]> {
  const deadline = Date.now() + timeoutMs;
  while (conn.frames.flat().length < n && Date.now() < deadline) await sleep(5);
  // A push of the same cycle that is still to come would show in the next take().
  await sleep(20);
  return conn.take() as Push[];
}

describe('live task subscriptions', () => {
  let f: LiveFixture;
  let tasks: TaskService;
  before(async () => {
    f = await liveFixture({ cycleMs: 5 });
    tasks = new TaskService(f.store, Date.now, f.bus);
  });
  after(async () => {
    await f.close();
  });

  it('pushes cre, upd, del of writes; nothing for a task created and deleted within one cycle', async () => {
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 's', f.ref, { typ: 'tsk' });
    await tasks.create(f.realm, 'a', { targetId: 'van', label: 'A' });
    assert.deepEqual((await pushes(conn)).map((p) => [p.uty, Object.keys(p.tsk), Object.keys(p.tsk.cre ?? {})]), [['dta', ['cre'], ['a']]]);
    await tasks.update(f.realm, 'a', { label: 'A2' });
    const [upd] = await pushes(conn);
    assert.equal(upd?.tsk.upd?.a?.lab, 'A2');
    // Called back to back: the store writes run in call order, the events share one push cycle.
    await Promise.all([tasks.create(f.realm, 'gone', { targetId: 'van' }), tasks.delete(f.realm, 'gone'), tasks.delete(f.realm, 'a')]);
    assert.deepEqual((await pushes(conn)).map((p) => p.tsk), [{ del: { a: { id: 'a', lab: 'A2', sts: '$hkt_not_started', stp: [], tid: 'van', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, dat: {} } } }]);
    f.live.delete(conn, 's');
    assert.deepEqual(f.live.held(), { realms: 0, tenants: 0, connections: 1 }, 'the realm is released with its last task subscription');
  });

  it('after lost events, a resync pushes the differences as cre/upd/del', async () => {
    const conn = new FakeConnection();
    await tasks.create(f.realm, 'kept', { targetId: 'van', label: 'K' });
    await tasks.create(f.realm, 'changed', { targetId: 'van', label: 'C' });
    await tasks.create(f.realm, 'removed', { targetId: 'van', label: 'R' });
    await createSubscription(f.live, conn, 's', f.ref, { typ: 'tsk', exe: true });
    assert.deepEqual(Object.keys((await pushes(conn))[0]?.tsk.cre ?? {}), ['kept', 'changed', 'removed']);
    // Written past the bus: the subscription hears nothing of these.
    await f.store.tasks.update(f.realm.id, 'changed', { label: 'C2' }, N0);
    await f.store.tasks.delete(f.realm.id, 'removed');
    await f.store.tasks.create(f.realm.id, task('added', 'N'));
    await sleep(50);
    assert.deepEqual(conn.take(), []);
    assert.equal(await f.live.resync(), 1);
    const [push] = await pushes(conn);
    assert.deepEqual(Object.keys(push?.tsk ?? {}).sort(), ['cre', 'del', 'upd']);
    assert.deepEqual(Object.keys(push?.tsk.cre ?? {}), ['added']);
    assert.equal(push?.tsk.upd?.changed?.lab, 'C2');
    assert.deepEqual(Object.keys(push?.tsk.del ?? {}), ['removed']);
    assert.equal(await f.live.resync(), 1);
    await sleep(50);
    assert.deepEqual(conn.take(), [], 'nothing more differs');
    conn.close();
    for (const id of ['kept', 'changed', 'added']) await tasks.delete(f.realm, id);
  });

  it('a change heard while the set loads is pushed once it is loaded; the full push has it', async () => {
    const gate: { open: () => void } = { open: () => undefined };
    const gated = new Promise<void>((resolve) => (gate.open = resolve));
    const list = f.store.tasks.list.bind(f.store.tasks);
    f.store.tasks.list = async (realm) => {
      const read = await list(realm);
      await gated;
      return read;
    };
    try {
      const conn = new FakeConnection();
      const created = createSubscription(f.live, conn, 's', f.ref, { typ: 'tsk', exe: true });
      await sleep(10);
      await tasks.create(f.realm, 'during', { targetId: 'van' });
      await sleep(30);
      assert.deepEqual(conn.take(), [], 'nothing while loading');
      gate.open();
      await created;
      const got = await pushes(conn);
      assert.equal(got.length, 1, JSON.stringify(got));
      assert.equal(got[0]?.uty, 'ful');
      assert.deepEqual(Object.keys(got[0]?.tsk.cre ?? {}), ['during']);
      conn.close();
    } finally {
      f.store.tasks.list = list;
    }
  });
});
