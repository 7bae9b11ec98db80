import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { LocusError } from '../../internal/errors.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { configure } from '../../internal/store/sqlite/schema.js';
import { prepareSearchFile, putBody, SEARCH_HASH_SIZE, SearchFile, searchFilePath } from '../../internal/store/sqlite/search-file.js';
import { searchMatch } from '../../internal/store/sqlite/search-index.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'locus-search-'));
  dirs.push(dir);
  return join(dir, 'locus.db');
}

const ids = async (store: SqliteStore, realm: string, words: string[]): Promise<string[]> =>
  (await store.objects.search(realm, { words, limit: 100 })).map((hit) => hit.object.id).sort();

/** Rowids of the objects, and of the search file's entries: equal when the index is in step. */
function entriesAndObjects(path: string): { entries: number[]; objects: number[] } {
  const main = new Database(path, { readonly: true, fileMustExist: true });
  const search = new Database(searchFilePath(path), { fileMustExist: true });
  try {
    search.prepare("INSERT INTO object_fts (object_fts) VALUES ('integrity-check')").run();
    return {
      entries: search.prepare<[], number>('SELECT id FROM object_fts_docsize ORDER BY id').pluck().all(),
      objects: main.prepare<[], number>('SELECT rowid FROM objects ORDER BY rowid').pluck().all(),
    };
  } finally {
    search.close();
    main.close();
  }
}

function assertInStep(path: string): void {
  const { entries, objects } = entriesAndObjects(path);
  assert.deepEqual(entries, objects, 'one full-text entry per object');
}

async function seeded(path: string): Promise<SqliteStore> {
  const store = openSqliteStore(path);
  await store.objects.upsertMany(
    'acme',
    [
      { id: 'truck/1', label: 'Red Tractor', data: { driver: 'Zoë' } },
      { id: 'truck/2', label: 'Blue Tractor' },
      { id: 'van/3', label: 'Van', data: { driver: 'Anna' } },
    ],
    N0,
  );
  return store;
}

void describe('search file', () => {
  void it('is rebuilt from the objects when missing', async () => {
    const path = freshPath();
    await (await seeded(path)).close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${searchFilePath(path)}${suffix}`, { force: true });
    assert.equal(existsSync(searchFilePath(path)), false);
    const store = openSqliteStore(path);
    try {
      assert.deepEqual(await ids(store, 'acme', ['trac']), ['truck/1', 'truck/2']);
      assert.deepEqual(await ids(store, 'acme', ['zoe']), ['truck/1']);
      await store.objects.indexed();
      assertInStep(path);
    } finally {
      await store.close();
    }
  });

  void it("is rebuilt when it was made for another database (a restored backup, a copied file)", async () => {
    const mine = freshPath();
    const theirs = freshPath();
    await (await seeded(mine)).close();
    const other = openSqliteStore(theirs);
    await other.objects.upsertMany('acme', [{ id: 'ghost', label: 'Tractor ghost' }, { id: 'ghost2', label: 'Anna' }], N0);
    await other.close();
    copyFileSync(searchFilePath(theirs), searchFilePath(mine));
    const store = openSqliteStore(mine);
    try {
      assert.deepEqual(await ids(store, 'acme', ['trac']), ['truck/1', 'truck/2']);
      assert.deepEqual(await ids(store, 'acme', ['anna']), ['van/3']);
      await store.objects.indexed();
      assertInStep(mine);
    } finally {
      await store.close();
    }
  });

  void it('follows writes made through another connection (the admin CLI)', async () => {
    const path = freshPath();
    const server = await seeded(path);
    const cli = openSqliteStore(path);
    try {
      await cli.objects.upsertMany('acme', [{ id: 'tractor/9', label: 'Green' }], N1);
      await cli.objects.upsertMany('acme', [{ id: 'truck/2', label: 'Blue lorry' }], N1);
      assert.deepEqual(await ids(server, 'acme', ['trac']), ['tractor/9', 'truck/1']);
      assert.deepEqual(await ids(server, 'acme', ['lorry']), ['truck/2']);
      await cli.realms.delete('acme');
      assert.deepEqual(await ids(server, 'acme', ['trac']), []);
      await server.objects.upsertMany('acme', [{ id: 'again', label: 'Tractor' }], N1);
      assert.deepEqual(await ids(cli, 'acme', ['trac']), ['again']);
      await server.objects.indexed();
      await cli.objects.indexed();
      assertInStep(path);
    } finally {
      await cli.close();
      await server.close();
    }
  });

  void it('a failing indexer is reported and retried; searches fail with unavailable meanwhile, then work', async () => {
    const path = freshPath();
    mkdirSync(searchFilePath(path)); // a directory where the file belongs: the worker cannot open it
    const errors: Error[] = [];
    const store = openSqliteStore(path, { onIndexerError: (err) => errors.push(err) });
    try {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'Tractor' }], N0);
      await assert.rejects(store.objects.search('acme', { words: ['trac'], limit: 10 }), (err) => err instanceof LocusError && err.code === 'unavailable');
      assert.ok(errors.length >= 1, 'the failure was reported');
      // The cause goes away: a restarted worker builds the index from the objects.
      rmSync(searchFilePath(path), { recursive: true });
      let hits: string[] = [];
      for (let attempt = 0; attempt < 50 && hits.length === 0; attempt++) {
        try {
          hits = await ids(store, 'acme', ['trac']);
        } catch (err) {
          assert.ok(err instanceof LocusError && err.code === 'unavailable', String(err));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.deepEqual(hits, ['a']);
      // Writes went on all along.
      assert.equal((await store.objects.get('acme', 'a'))?.label, 'Tractor');
    } finally {
      await store.close();
    }
  });

  void it('drops queue entries once applied', async () => {
    const path = freshPath();
    const store = await seeded(path);
    try {
      await store.objects.delete('acme', 'van/3', N1);
      await store.objects.indexed();
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        assert.equal(db.prepare('SELECT count(*) FROM search_queue').pluck().get(), 0);
      } finally {
        db.close();
      }
      assertInStep(path);
    } finally {
      await store.close();
    }
  });

  void it("sets FTS5's hashsize in a new search file and in one made with another", async () => {
    const path = freshPath();
    await (await seeded(path)).close();
    const hashSize = (): unknown => {
      const search = new Database(searchFilePath(path), { fileMustExist: true });
      try {
        return search.prepare("SELECT v FROM object_fts_config WHERE k = 'hashsize'").pluck().get();
      } finally {
        search.close();
      }
    };
    assert.equal(hashSize(), SEARCH_HASH_SIZE);
    // A file of an earlier build had FTS5's default (1 MiB).
    const old = new Database(searchFilePath(path));
    old.prepare("INSERT INTO object_fts (object_fts, rank) VALUES ('hashsize', 1048576)").run();
    old.close();
    assert.equal(hashSize(), 1048576);
    const store = openSqliteStore(path);
    try {
      assert.deepEqual(await ids(store, 'acme', ['tractor']), ['truck/1', 'truck/2']);
    } finally {
      await store.close();
    }
    assert.equal(hashSize(), SEARCH_HASH_SIZE);
    assertInStep(path);
  });

  void it('applies each queue entry once and in order, also when a rowid is reused', async () => {
    const path = freshPath();
    await (await seeded(path)).close();
    const main = new Database(path);
    configure(main);
    const search = new Database(searchFilePath(path));
    prepareSearchFile(search);
    const file = new SearchFile(main, search);
    const key = main.prepare<[], number>("SELECT key FROM realm_keys WHERE realm = 'acme'").pluck().get() ?? -1;
    const found = (word: string): number[] =>
      search.prepare<[string], number>('SELECT rowid FROM object_fts WHERE object_fts MATCH ? ORDER BY rowid').pluck().all(searchMatch(key, [word]));
    try {
      const start = file.catchUp();
      assert.equal(file.applied(), start);
      assert.equal(file.catchUp(), start, 'nothing queued: nothing applied');
      // The object with the highest rowid goes (the trigger queues it), and a new object
      // takes its rowid; the entries apply in order, so the index holds the new object.
      const last = main.prepare<[], number>('SELECT max(rowid) FROM objects').pluck().get() ?? -1;
      main.prepare('DELETE FROM objects WHERE rowid = ?').run(last);
      main
        .prepare("INSERT INTO objects (rowid, realm, id, label, data) VALUES (?, 'acme', 'late', 'Harvester', '{}')")
        .run(last);
      main.prepare("INSERT INTO search_queue (op, body) VALUES ('put', ?)").run(putBody([[last, key, 'late', 'Harvester', {}]]));
      assert.deepEqual(found('anna'), [last]);
      const applied = file.catchUp();
      assert.equal(applied, start + 2);
      assert.deepEqual(found('anna'), []);
      assert.deepEqual(found('harv'), [last]);
      // Applied entries are never applied again (the state is in the search file).
      main.prepare("UPDATE objects SET label = 'Combine' WHERE rowid = ?").run(last);
      assert.equal(file.catchUp(), applied);
      assert.deepEqual(found('harv'), [last], 'no entry queued: the index is not touched');
      // A later put rewrites the entry with the state it carries; a del removes it.
      main.prepare("INSERT INTO search_queue (op, body) VALUES ('put', ?)").run(putBody([[last, key, 'late', 'Combine', { crop: 'wheat' }]]));
      assert.equal(file.catchUp(), applied + 1);
      assert.deepEqual(found('harv'), []);
      assert.deepEqual(found('wheat'), [last]);
      main.prepare('DELETE FROM objects WHERE rowid = ?').run(last);
      assert.equal(file.catchUp(), applied + 2);
      assert.deepEqual(found('comb'), []);
      assert.deepEqual(found('wheat'), []);
    } finally {
      search.close();
      main.close();
    }
  });
});
