import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';
import { BACKGROUND_PRIORITY, lowerThreadPriority } from '../../internal/runtime/thread-priority.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

/** The nice value of each thread of this process, by thread id (/proc/self/task/<tid>/stat, field 19). */
function threadNice(): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      nice.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return nice;
}

describe('background threads of the SQLite store', () => {
  void it('leaves the priority alone where it is per process (not Linux)', () => {
    assert.equal(lowerThreadPriority(BACKGROUND_PRIORITY, 'darwin'), false);
    assert.equal(getPriority(), 0);
  });

  void it('the search indexer runs at the lowest priority, the checkpointer and the event loop as before', { skip: process.platform !== 'linux' }, async () => {
    const count = (nice: number): number => [...threadNice().values()].filter((n) => n === nice).length;
    const before = count(BACKGROUND_PRIORITY);
    const store = openSqliteStore(':memory:');
    try {
      await store.objects.indexed(); // the indexer's thread is up
      let lowered = 0;
      for (let i = 0; i < 100 && lowered !== 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lowered = count(BACKGROUND_PRIORITY) - before;
      }
      assert.equal(lowered, 1, 'the indexer at the lowest');
      assert.deepEqual([...threadNice().values()].filter((n) => n !== 0 && n !== BACKGROUND_PRIORITY), [], 'no other thread lowered (the checkpointer keeps up)');
      assert.equal(threadNice().get(process.pid), 0, 'the main thread is not');
      assert.equal(getPriority(), 0);
    } finally {
      await store.close();
    }
  });
});
