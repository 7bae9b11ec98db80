/**
 * The store contract for tasks (TaskStore, domain/task.ts), run by store-contract.ts against
 * every adapter: create (409 on an existing id), get, update (the domain's merge: data merges,
 * steps replace, a new target replaces the other kind), list in creation order (across
 * deletes and re-creates), delete, realm isolation and realm deletion.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import type { TaskRecord } from '../../internal/domain/task.js';
import type { RealmSettings } from '../../internal/domain/types.js';
import type { Store } from '../../internal/store/port.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const N2 = '2024-05-01T12:00:02.000Z';
const SETTINGS: RealmSettings = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

function task(id: string, fields: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id,
    label: null,
    description: null,
    status: '$hkt_not_started',
    steps: [],
    targetId: 'van/1',
    location: null,
    data: {},
    created: N0,
    updated: N0,
    ...fields,
  };
}

export function taskContract(withStore: (body: (store: Store) => Promise<void>) => Promise<void>): void {
  void it('create returns the change and get reads every field back exactly', () =>
    withStore(async (store) => {
      const full = task('job/1', {
        label: 'Deliver',
        description: 'Two parcels, ring twice',
        status: '$hkt_blocked',
        steps: [
          { label: 'pick up', status: '$hkt_completed', data: { weight: 1, nested: { a: [1, null, 'x'] } } },
          { label: null, status: '$hkt_not_started', data: {} },
        ],
        targetId: null,
        location: { longitude: 13.4, latitude: 52.5, altitude: 34, time: N0 },
        data: JSON.parse('{"priority":2,"__proto__":"plain key","ü b":true}') as TaskRecord['data'],
      });
      assert.deepEqual(await store.tasks.create('acme', full), { realm: 'acme', id: 'job/1', old: null, new: full });
      const read = await store.tasks.get('acme', 'job/1');
      assert.deepEqual(read, full);
      assert.deepEqual(Object.keys(read?.data ?? {}), ['priority', '__proto__', 'ü b']);
      assert.equal(await store.tasks.get('acme', 'nope'), null);
      assert.equal(await store.tasks.get('other', 'job/1'), null);
    }));

  void it('create on an existing id is a 409 `task with id <id> already exists` and changes nothing', () =>
    withStore(async (store) => {
      await store.tasks.create('acme', task('t', { label: 'first' }));
      await assert.rejects(store.tasks.create('acme', task('t', { label: 'second', targetId: 'other' })), (err: unknown) => {
        assert.ok(err instanceof LocusError);
        assert.equal(err.code, 'conflict');
        assert.equal(err.message, 'task with id t already exists');
        return true;
      });
      assert.deepEqual(await store.tasks.get('acme', 't'), task('t', { label: 'first' }));
      assert.deepEqual((await store.tasks.list('acme')).map((t) => t.id), ['t']);
    }));

  void it('update merges data (null removes), replaces steps, label, status; sets updated; keeps created', () =>
    withStore(async (store) => {
      const old = task('t', { label: 'a', description: 'd', data: { keep: 1, drop: 2 }, steps: [{ label: 's', status: '$hkt_not_started', data: { w: 1 } }] });
      await store.tasks.create('acme', old);
      const change = await store.tasks.update(
        'acme',
        't',
        { label: null, status: '$hkt_in_progress', steps: [{ label: 's2', status: '$hkt_completed', data: {} }], data: { drop: null, add: { x: 1 } } },
        N1,
      );
      const next = task('t', {
        label: null,
        description: 'd',
        status: '$hkt_in_progress',
        steps: [{ label: 's2', status: '$hkt_completed', data: {} }],
        data: { keep: 1, add: { x: 1 } },
        updated: N1,
      });
      assert.deepEqual(change, { realm: 'acme', id: 't', old, new: next });
      assert.deepEqual(await store.tasks.get('acme', 't'), next);
      assert.equal(await store.tasks.update('acme', 'missing', { label: 'x' }, N1), null);
      assert.equal(await store.tasks.get('acme', 'missing'), null);
    }));

  void it('a new target replaces the other kind: location drops targetId, targetId drops location', () =>
    withStore(async (store) => {
      await store.tasks.create('acme', task('t'));
      const place = { longitude: 1, latitude: 2, time: N1 };
      const moved = await store.tasks.update('acme', 't', { location: place }, N1);
      assert.equal(moved?.new?.targetId, null);
      assert.deepEqual(moved?.new?.location, place);
      const back = await store.tasks.update('acme', 't', { targetId: 'truck' }, N2);
      assert.equal(back?.new?.targetId, 'truck');
      assert.equal(back?.new?.location, null);
      assert.deepEqual(await store.tasks.get('acme', 't'), task('t', { targetId: 'truck', updated: N2 }));
    }));

  void it('list is in creation order (not id order), across deletes and a re-created id', () =>
    withStore(async (store) => {
      for (const id of ['zeta', 'alpha', 'mid', 'beta']) await store.tasks.create('acme', task(id));
      assert.deepEqual((await store.tasks.list('acme')).map((t) => t.id), ['zeta', 'alpha', 'mid', 'beta']);
      await store.tasks.update('acme', 'zeta', { label: 'changed' }, N1);
      assert.deepEqual((await store.tasks.list('acme')).map((t) => t.id), ['zeta', 'alpha', 'mid', 'beta'], 'an update keeps the place');
      assert.deepEqual((await store.tasks.delete('acme', 'beta'))?.old, task('beta'));
      await store.tasks.delete('acme', 'zeta');
      await store.tasks.create('acme', task('zeta'));
      await store.tasks.create('acme', task('aaa'));
      assert.deepEqual((await store.tasks.list('acme')).map((t) => t.id), ['alpha', 'mid', 'zeta', 'aaa']);
      assert.deepEqual(await store.tasks.list('empty'), []);
    }));

  void it('delete returns the change and removes the task; null when missing', () =>
    withStore(async (store) => {
      const t = task('t', { label: 'x' });
      await store.tasks.create('acme', t);
      assert.deepEqual(await store.tasks.delete('acme', 't'), { realm: 'acme', id: 't', old: t, new: null });
      assert.equal(await store.tasks.get('acme', 't'), null);
      assert.equal(await store.tasks.delete('acme', 't'), null);
      assert.deepEqual(await store.tasks.list('acme'), []);
    }));

  void it('the same task id in two realms is two tasks; deleting a realm removes its tasks only', () =>
    withStore(async (store) => {
      await store.realms.put('north', SETTINGS, N0);
      await store.realms.put('south', SETTINGS, N0);
      await store.tasks.create('north', task('job', { label: 'n' }));
      await store.tasks.create('south', task('job', { label: 's' }));
      await store.tasks.update('north', 'job', { status: '$hkt_failed' }, N1);
      assert.equal((await store.tasks.get('south', 'job'))?.status, '$hkt_not_started');
      assert.equal(await store.realms.delete('north'), true);
      assert.deepEqual(await store.tasks.list('north'), []);
      assert.equal(await store.tasks.get('north', 'job'), null);
      assert.deepEqual((await store.tasks.list('south')).map((t) => t.label), ['s']);
      // Put again, the realm starts without tasks.
      await store.realms.put('north', SETTINGS, N2);
      assert.deepEqual(await store.tasks.list('north'), []);
      await store.tasks.create('north', task('again'));
      assert.deepEqual((await store.tasks.list('north')).map((t) => t.id), ['again']);
    }));
}
