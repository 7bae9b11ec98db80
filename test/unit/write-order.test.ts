/**
 * The service's ordering rule (service/write-order.ts) with a fake store whose calls
 * resolve when the test says, in any order: writes of one object reach the store one after
 * the other, in arrival order; writes of different objects reach it at once and finish in
 * whatever order the store finishes them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectChange, ObjectPatch, Realm } from '../../internal/domain/types.js';
import type { ChangeListener } from '../../internal/service/changes.js';
import { ObjectService } from '../../internal/service/objects.js';
import { WriteOrder } from '../../internal/service/write-order.js';
import type { Store } from '../../internal/store/port.js';

const realm: Realm = { id: 'r', tenant: 'default', name: 'r', label: null, data: {}, settings: { connectionTimeout: 60, historyRetentionDays: 30, rateLimit: null }, created: '2026-01-01T00:00:00.000Z' };

interface Call {
  kind: 'upsert' | 'delete';
  ids: string[];
  labels: (string | null | undefined)[];
  resolve(): void;
  reject(err: Error): void;
}

/** A store whose object writes wait until the test resolves them. */
function fakeStore(): { store: Store; calls: Call[] } {
  const calls: Call[] = [];
  const change = (id: string, label: string | null | undefined): ObjectChange => ({
    realm: 'r',
    id,
    old: null,
    new: { id, label: label ?? null, location: null, data: {}, seen: null },
    history: [],
    time: '2026-01-01T00:00:00.000Z',
  });
  const objects = {
    upsertMany: (_realm: string, patches: ObjectPatch[]): Promise<ObjectChange[]> =>
      new Promise((resolve, reject) => {
        const ids = patches.map((p) => p.id);
        const labels = patches.map((p) => p.label);
        calls.push({ kind: 'upsert', ids, labels, resolve: () => resolve(patches.map((p) => change(p.id, p.label))), reject });
      }),
    delete: (_realm: string, id: string): Promise<ObjectChange | null> =>
      new Promise((resolve, reject) => {
        calls.push({ kind: 'delete', ids: [id], labels: [], resolve: () => resolve({ ...change(id, null), new: null }), reject });
      }),
  };
  return { store: { objects } as unknown as Store, calls };
}

function recordingListener(): { listener: ChangeListener; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    listener: {
      objectsChanged: (_realm, changes) => {
        for (const c of changes) seen.push(`${c.id}:${c.new === null ? 'deleted' : String(c.new.label)}`);
      },
      areaChanged: () => undefined,
      realmDeleted: () => undefined,
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function service(): { objects: ObjectService; calls: Call[]; seen: string[] } {
  const { store, calls } = fakeStore();
  const { listener, seen } = recordingListener();
  const objects = new ObjectService(store, () => Date.UTC(2026, 0, 1), { maxBulk: 10_000, maxPage: 1000 }, listener);
  return { objects, calls, seen };
}

describe('write order: one object in arrival order, different objects concurrently', () => {
  it('a second write of the same object reaches the store only once the first has settled', async () => {
    const { objects, calls, seen } = service();
    const first = objects.upsert(realm, 'a', { label: 'one' });
    const second = objects.upsert(realm, 'a', { label: 'two' });
    await turn();
    assert.equal(calls.length, 1, 'the second write waits for the first');
    assert.deepEqual(calls[0]?.labels, ['one']);
    calls[0]?.resolve();
    assert.equal((await first).new?.label, 'one');
    await turn();
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]?.labels, ['two']);
    calls[1]?.resolve();
    assert.equal((await second).new?.label, 'two');
    assert.deepEqual(seen, ['a:one', 'a:two']);
  });

  it('writes of different objects reach the store at once and finish out of order', async () => {
    const { objects, calls, seen } = service();
    const order: string[] = [];
    const a = objects.upsert(realm, 'a', { label: 'A' }).then(() => order.push('a'));
    const b = objects.upsert(realm, 'b', { label: 'B' }).then(() => order.push('b'));
    assert.equal(calls.length, 2, 'both are handed to the store in the caller turn');
    calls[1]?.resolve();
    await b;
    assert.deepEqual(order, ['b'], 'b finished while a is still under way');
    calls[0]?.resolve();
    await a;
    assert.deepEqual(order, ['b', 'a']);
    assert.deepEqual(seen, ['b:B', 'a:A']);
  });

  it('a batch waits for every object it shares with earlier writes, and later writes wait for it', async () => {
    const { objects, calls, seen } = service();
    const a = objects.upsert(realm, 'a', { label: 'a1' });
    const c = objects.upsert(realm, 'c', { label: 'c1' });
    const batch = objects.bulk(realm, {
      objects: [
        { id: 'a', label: 'a2' },
        { id: 'b', label: 'b2' },
      ],
    });
    const b = objects.upsert(realm, 'b', { label: 'b3' });
    const d = objects.upsert(realm, 'd', { label: 'd1' });
    await turn();
    // a, c and d are free; the batch waits for a, the last b write for the batch.
    assert.deepEqual(
      calls.map((call) => call.ids.join()),
      ['a', 'c', 'd'],
    );
    calls[2]?.resolve();
    calls[1]?.resolve();
    await Promise.all([c, d]);
    await turn();
    assert.equal(calls.length, 3, 'the batch still waits for a');
    calls[0]?.resolve();
    await a;
    await turn();
    assert.deepEqual(calls[3]?.ids, ['a', 'b']);
    assert.equal(calls.length, 4, 'the b write waits for the batch');
    calls[3]?.resolve();
    await batch;
    await turn();
    assert.deepEqual(calls[4]?.labels, ['b3']);
    calls[4]?.resolve();
    await b;
    assert.deepEqual(seen, ['d:d1', 'c:c1', 'a:a1', 'a:a2', 'b:b2', 'b:b3']);
  });

  it('a failed write does not hold up the next write of its object; deletes are in line too', async () => {
    const { objects, calls, seen } = service();
    const failed = objects.upsert(realm, 'a', { label: 'lost' });
    const deleted = objects.delete(realm, 'a');
    const after = objects.upsert(realm, 'a', { label: 'again' });
    calls[0]?.reject(new Error('disk full'));
    await assert.rejects(failed, /disk full|internal/);
    await turn();
    assert.equal(calls[1]?.kind, 'delete');
    assert.equal(calls.length, 2);
    calls[1]?.resolve();
    await deleted;
    await turn();
    calls[2]?.resolve();
    await after;
    assert.deepEqual(seen, ['a:deleted', 'a:again']);
  });
});

describe('WriteOrder', () => {
  it('forgets an object once its last write has settled', async () => {
    const order = new WriteOrder();
    let release: () => void = () => undefined;
    const held = order.run('r', ['x', 'y'], () => new Promise<void>((resolve) => (release = resolve)));
    const next = order.run('r', ['y'], () => Promise.resolve());
    assert.equal(order.pending, 2);
    release();
    await Promise.all([held, next]);
    await turn();
    assert.equal(order.pending, 0);
  });

  it('keeps realms apart: the same id in two realms does not wait', async () => {
    const order = new WriteOrder();
    const started: string[] = [];
    let release: () => void = () => undefined;
    const one = order.run('r1', ['x'], () => {
      started.push('r1');
      return new Promise<void>((resolve) => (release = resolve));
    });
    const two = order.run('r2', ['x'], () => {
      started.push('r2');
      return Promise.resolve();
    });
    assert.deepEqual(started, ['r1', 'r2']);
    await two;
    release();
    await one;
  });

  it('a write that throws at once rejects its promise and frees its objects', async () => {
    const order = new WriteOrder();
    await assert.rejects(
      order.run('r', ['x'], () => {
        throw new Error('bad');
      }),
      /bad/,
    );
    let ran = false;
    await order.run('r', ['x'], () => {
      ran = true;
      return Promise.resolve();
    });
    assert.ok(ran);
  });
});
