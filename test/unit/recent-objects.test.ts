import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentObjects, type RecentObject } from '../../internal/store/sqlite/recent-objects.js';

const entry = (id: string, rowid = 1): RecentObject => ({
  row: { rowid, id, label: null, location: null, seen: null, data: '{}', past: null, loc_pruned: 0 },
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

  void it('stays within its bound, dropping the least recently written first', () => {
    const recent = new RecentObjects(100);
    for (let i = 0; i < 100; i++) recent.set('a', `o${i}`, entry(`o${i}`, i));
    recent.set('a', 'o0', entry('o0', 1000)); // written again: now the most recent
    for (let i = 0; i < 50; i++) recent.set('b', `p${i}`, entry(`p${i}`, i));
    assert.ok(recent.count <= 100, `count ${recent.count}`);
    assert.ok(recent.count >= 75, `count ${recent.count}`);
    assert.equal(recent.get('a', 'o0')?.row.rowid, 1000);
    assert.equal(recent.get('a', 'o1'), undefined, 'the oldest went');
    assert.ok(recent.get('b', 'p49') !== undefined, 'the newest stayed');
    let held = 0;
    for (const realm of ['a', 'b']) for (let i = 0; i < 100; i++) if (recent.get(realm, `${realm === 'a' ? 'o' : 'p'}${i}`) !== undefined) held++;
    assert.equal(held, recent.count);
  });
});
