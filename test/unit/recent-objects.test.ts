import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentObjects, type RecentObject } from '../../internal/store/sqlite/recent-objects.js';

const entry = (id: string, rowid = 1): RecentObject => ({
  row: { rowid, id, label: null, seen: null, past: null, loc_pruned: 0, ver: 0, loc_ver: 0, ver_last: null, snaps: null },
  obj: { id, label: null, location: null, data: {}, seen: null },
});

void describe('recent objects', () => {
  void it('holds entries per realm; a later set replaces an earlier one', () => {
    const recent = new RecentObjects(10);
    recent.set('a', 'x', entry('x', 1));
    recent.set('b', 'x', entry('x', 2));
    recent.set('a', 'x', entry('x', 3));
    assert.equal(recent.get('a', 'x')?.row.rowid, 3);
    assert.equal(recent.get('b', 'x')?.row.rowid, 2);
    assert.equal(recent.get('a', 'y'), undefined);
    assert.equal(recent.count, 2);
    recent.delete('a', 'x');
    recent.delete('a', 'x');
    assert.equal(recent.get('a', 'x'), undefined);
    assert.equal(recent.count, 1);
    recent.forget('b');
    assert.equal(recent.count, 0);
    recent.set('c', 'z', entry('z'));
    recent.clear();
    assert.equal(recent.get('c', 'z'), undefined);
    assert.equal(recent.count, 0);
  });

  void it('stays within its bound and holds every object written within the last half of it', () => {
    const max = 100;
    const recent = new RecentObjects(max);
    let state = 1;
    const random = (n: number): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state % n;
    };
    // Writes over 300 objects of two realms: the last 50 distinct ones are held, at most 100 in all.
    const written: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const realm = random(2) === 0 ? 'a' : 'b';
      const id = `o${random(150)}`;
      recent.set(realm, id, entry(id, i));
      const key = `${realm}/${id}`;
      const at = written.indexOf(key);
      if (at >= 0) written.splice(at, 1);
      written.push(key);
      if (i % 97 === 0) {
        assert.ok(recent.count <= max, `count ${recent.count}`);
        for (const held of written.slice(-max / 2)) {
          const [r, o] = held.split('/') as [string, string];
          assert.ok(recent.get(r, o) !== undefined, `${held} is held`);
        }
      }
    }
    // The newest entry of an object wins, in whichever generation an older one is.
    recent.set('a', 'o1', entry('o1', -1));
    assert.equal(recent.get('a', 'o1')?.row.rowid, -1);
    for (let i = 0; i < 49; i++) recent.set('c', `n${i}`, entry(`n${i}`));
    assert.equal(recent.get('a', 'o1')?.row.rowid, -1, 'still held: written within the last 50');
    // A delete reaches both generations.
    recent.delete('a', 'o1');
    assert.equal(recent.get('a', 'o1'), undefined);
    for (let i = 0; i < 200; i++) recent.set('d', `x${i}`, entry(`x${i}`));
    assert.equal(recent.get('c', 'n0'), undefined, 'two generations later, gone');
    assert.ok(recent.count <= max);
  });
});
