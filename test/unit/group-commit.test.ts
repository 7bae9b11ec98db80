/** Group commit over a real (in-memory) SQLite database: grouping, order, and which failures are retried alone. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../internal/store/sqlite/group-commit.js';
import { isWriteSpecific } from '../../internal/store/sqlite/sqlite-errors.js';

interface Write {
  id: number;
  fail?: Error;
}

function setup(): { db: Database.Database; group: GroupCommit<Write, number, number>; calls: number[]; groups: number[]; rollbacks: number[] } {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
  const insert = db.prepare<[number]>('INSERT INTO t (id) VALUES (?)');
  const calls: number[] = [];
  // The size of each group run, and of each one rolled back.
  const groups: number[] = [];
  const rollbacks: number[] = [];
  const group = new GroupCommit<Write, number, number>(db, {
    write: (write) => {
      calls.push(write.id);
      groups[groups.length - 1] = (groups[groups.length - 1] ?? 0) + 1;
      insert.run(write.id);
      if (write.fail !== undefined) throw write.fail;
      return write.id;
    },
    committed: (id) => id * 10,
    begin: () => groups.push(0),
    rolledBack: () => rollbacks.push(groups[groups.length - 1] as number),
    translate: (err) => err,
    retryAlone: isWriteSpecific,
    weight: () => 1,
    maxWeight: 3,
  });
  return { db, group, calls, groups, rollbacks };
}

const ids = (db: Database.Database): number[] => db.prepare<[], number>('SELECT id FROM t ORDER BY id').pluck().all();

void describe('group commit', () => {
  void it('commits the writes of one turn together, in order, at most maxWeight a group', async () => {
    const { db, group, calls, groups } = setup();
    const results = await Promise.all([1, 2, 3, 4, 5].map((id) => group.submit({ id })));
    assert.deepEqual(results, [10, 20, 30, 40, 50]);
    assert.deepEqual(calls, [1, 2, 3, 4, 5]);
    assert.deepEqual(groups, [3, 2]);
    assert.deepEqual(ids(db), [1, 2, 3, 4, 5]);
  });

  void it('runs the writes of a group again alone when one fails on its own: only that one fails', async () => {
    const { db, group, calls, rollbacks } = setup();
    const outcomes = await Promise.allSettled([
      group.submit({ id: 1 }),
      group.submit({ id: 2, fail: new TypeError('not serialisable') }),
      group.submit({ id: 3 }),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(calls, [1, 2, 1, 2, 3]);
    // The group of three rolled back at its second write, then that write alone.
    assert.deepEqual(rollbacks, [2, 1]);
    assert.deepEqual(ids(db), [1, 3]);
  });

  void it('fails the whole group at once on an error of the database, without running its writes again', async () => {
    const { db, group, calls, rollbacks } = setup();
    const busy = new Database.SqliteError('database is locked', 'SQLITE_BUSY');
    const outcomes = await Promise.allSettled([group.submit({ id: 1 }), group.submit({ id: 2, fail: busy }), group.submit({ id: 3 })]);
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) if (outcome.status === 'rejected') assert.equal(outcome.reason, busy);
    assert.deepEqual(calls, [1, 2]);
    assert.deepEqual(rollbacks, [2]);
    assert.deepEqual(ids(db), []);
  });

  void it('counts a constraint violation as one write\'s own', () => {
    assert.equal(isWriteSpecific(new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE')), true);
    assert.equal(isWriteSpecific(new Error('x')), true);
    assert.equal(isWriteSpecific(new Database.SqliteError('disk full', 'SQLITE_FULL')), false);
    assert.equal(isWriteSpecific(new Database.SqliteError('locked', 'SQLITE_BUSY')), false);
  });

  void it('runs what is queued at once when flushed', async () => {
    const { db, group } = setup();
    const pending = group.submit({ id: 7 });
    assert.equal(group.pending, 1);
    group.flush();
    assert.equal(group.pending, 0);
    assert.deepEqual(ids(db), [7]);
    assert.equal(await pending, 70);
  });
});
