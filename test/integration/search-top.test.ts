import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Data, ObjectPatch } from '../../internal/domain/types.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { prepareSearchFile, searchFilePath } from '../../internal/store/sqlite/search-file.js';
import { rankFacts, searchMatch } from '../../internal/store/sqlite/search-index.js';
import { RankedSearch, type RankedHit } from '../../internal/store/sqlite/search-top.js';
import { mulberry32 } from '../support/bench-random.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'locus-search-top-'));
  dirs.push(dir);
  return join(dir, 'locus.db');
}

/** Words with shared prefixes (`mü`, `mül`, `müller`, `müllerberg`, …), numbers among them. */
const STEMS = ['müller', 'muell', 'mull', 'schmidt', 'schm', 'ab', 'abc', 'abcd', 'zo', 'zoë', '12', '123', '1'];
const SUFFIXES = ['', '', '', 'berg', 'son', 'e', 'x', '7', 'ström'];

function word(random: () => number): string {
  const stem = STEMS[Math.floor(random() * STEMS.length)] as string;
  return stem + (SUFFIXES[Math.floor(random() * SUFFIXES.length)] as string);
}

function phrase(random: () => number, most: number): string {
  const n = 1 + Math.floor(random() * most);
  return Array.from({ length: n }, () => word(random)).join(random() < 0.5 ? ' ' : '-');
}

/** A random object: words in id, label and data (repeats, nested values, numbers), or few. */
function patch(random: () => number, i: number): ObjectPatch {
  const data: Data = {};
  const fields = Math.floor(random() * 4);
  for (let f = 0; f < fields; f++) {
    const r = random();
    if (r < 0.6) data[`f${f}`] = phrase(random, 3);
    else if (r < 0.8) data[`f${f}`] = Math.floor(random() * 200) / (random() < 0.5 ? 1 : 10);
    else data[`f${f}`] = { inner: phrase(random, 2), list: [word(random), 3] };
  }
  return {
    id: random() < 0.2 ? `${word(random)}/${i}` : `obj/${i}`,
    label: random() < 0.3 ? phrase(random, 2) : random() < 0.5 ? null : `Thing ${i}`,
    data,
  };
}

/** Today's statement (object-reads.ts before the ranked path): FTS5 ranks every match. */
function fts5Top(db: Database.Database, key: number, words: string[], limit: number): RankedHit[] {
  return db
    .prepare<[string, number], [number, number]>('SELECT rowid, rank FROM search.object_fts WHERE object_fts MATCH ? ORDER BY rank LIMIT ?')
    .raw(true)
    .all(searchMatch(key, words), limit);
}

function reader(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.prepare('ATTACH DATABASE ? AS search').run(searchFilePath(path));
  return db;
}

function sumVarints(bytes: Buffer): number {
  let sum = 0;
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      sum += value;
      value = 0;
    }
  }
  return sum;
}

const keyOf = (db: Database.Database, realm: string): number =>
  db.prepare<[string], number>('SELECT key FROM realm_keys WHERE realm = ?').pluck().get(realm) ?? -1;

async function filled(path: string, seed: number, count: number): Promise<SqliteStore> {
  const random = mulberry32(seed);
  const store = openSqliteStore(path);
  for (const realm of ['r1', 'r2']) {
    const patches = Array.from({ length: realm === 'r1' ? count : count / 4 }, (_, i) => patch(random, i));
    for (let i = 0; i < patches.length; i += 500) await store.objects.upsertMany(realm, patches.slice(i, i + 500), N0);
  }
  // Updates (entries rewritten: stale repeat tokens) and deletes.
  const changed = Array.from({ length: count / 5 }, () => {
    const i = Math.floor(random() * count);
    return { ...patch(random, i), id: `obj/${i}` };
  });
  await store.objects.upsertMany('r1', changed, N1);
  for (let i = 0; i < count / 20; i++) await store.objects.delete('r1', `obj/${Math.floor(random() * count)}`, N1);
  await store.objects.indexed();
  return store;
}

void describe('ranked search (search-top.ts)', () => {
  void it('repeat tokens: a word that starts two terms words starts one of them', () => {
    const random = mulberry32(7);
    for (let n = 0; n < 2000; n++) {
      const terms = Array.from({ length: Math.floor(random() * 6) }, () => `3x${word(random)}`);
      const { length, repeats } = rankFacts('3xa 3xb', terms.join(' '));
      assert.equal(length, 2 + terms.length);
      const probes = new Set(terms.flatMap((t) => Array.from({ length: t.length - 2 }, (_, i) => t.slice(0, i + 3))));
      for (const probe of probes) {
        const twice = terms.filter((t) => t.startsWith(probe)).length >= 2;
        assert.equal(
          repeats.some((r) => r.startsWith(probe)),
          twice,
          `${probe} in ${terms.join(' ')}: ${repeats.join(' ')}`,
        );
      }
    }
  });

  for (const seed of [1, 2, 3]) {
    void it(`gives the hits and ranks of FTS5 ranking every match (random data, seed ${seed})`, async () => {
      const path = freshPath();
      const store = await filled(path, seed, 2_000);
      const db = reader(path);
      try {
        // Short walk steps: most walks take several.
        const ranked = new RankedSearch(db, 0, 4);
        const random = mulberry32(seed * 31);
        let used = 0;
        let queries = 0;
        for (const realm of ['r1', 'r2']) {
          const key = keyOf(db, realm);
          const prefixes = new Set<string>();
          for (const stem of STEMS) for (let i = 1; i <= stem.length; i++) prefixes.add(stem.slice(0, i));
          for (const w of ['thing', 'th', 'obj', 'o', 'inner', 'nothing', '5', '0', ...Array.from({ length: 30 }, () => word(random))]) prefixes.add(w);
          for (const prefix of prefixes) {
            for (const limit of [1, 3, 10, 50, 1000]) {
              queries++;
              const expected = fts5Top(db, key, [prefix], limit);
              const got = ranked.top(key, prefix, limit);
              if (got === null) continue;
              used++;
              assert.deepEqual(got, expected, `${realm} ${prefix} limit ${limit}`);
            }
          }
        }
        // Each entry's length is FTS5's (its column sizes, varints, summed).
        const sizes = db.prepare<[], [number, Buffer]>('SELECT id, sz FROM search.object_fts_docsize').raw(true).all();
        const lengths = new Map(db.prepare<[], [number, number]>('SELECT id, len FROM search.object_rank_len').raw(true).all());
        assert.equal(lengths.size, sizes.length);
        for (const [id, sz] of sizes) assert.equal(lengths.get(id), sumVarints(sz), `length of ${id}`);
        // Most queries of common prefixes take the ranked path.
        assert.ok(used > queries / 3, `ranked path used in ${used} of ${queries} queries`);
      } finally {
        db.close();
        await store.close();
      }
    });
  }

  void it('answers through the store as the FTS5 statement did: objects, order by rank then id, scores', async () => {
    const path = freshPath();
    const store = await filled(path, 4, 2_000);
    // Enough matches for the store's own threshold: as in the bench, a surname among data.
    const random = mulberry32(4);
    const fleet = Array.from({ length: 24_000 }, (_, i) => ({
      id: `car/${i}`,
      label: `Car ${i}`,
      data: { driver: `${['Anna', 'Ben', 'Zoë'][i % 3] ?? ''} ${['Müller', 'Schmidt'][i % 2] ?? ''}${SUFFIXES[Math.floor(random() * SUFFIXES.length)] ?? ''}`, speed: Math.floor(random() * 120), fuel: Math.floor(random() * 1000) / 1000 },
    }));
    for (let i = 0; i < fleet.length; i += 2_000) await store.objects.upsertMany('r1', fleet.slice(i, i + 2_000), N1);
    await store.objects.indexed();
    const db = reader(path);
    try {
      const key = keyOf(db, 'r1');
      let ranked = 0;
      const random = mulberry32(99);
      const queries = [['m'], ['mu'], ['mull'], ['muller'], ['ab'], ['abc'], ['1'], ['12'], ['s'], ['schm'], ['zo'], ['ab', 'mu'], ['thing'], [word(random)], [word(random)]];
      for (const words of queries) {
        for (const limit of [10, 1000]) {
          const expected = db
            .prepare<[string, number, string], [string, number]>(
              `SELECT o.id, f.rank FROM (SELECT rowid, rank FROM search.object_fts WHERE object_fts MATCH ? ORDER BY rank LIMIT ?) AS f
                 CROSS JOIN objects o ON o.rowid = f.rowid WHERE o.realm = ? ORDER BY f.rank, o.id`,
            )
            .raw(true)
            .all(searchMatch(key, words), limit, 'r1')
            .map(([id, rank]) => [id, -rank + 0]);
          const hits = await store.objects.search('r1', { words, limit });
          assert.deepEqual(
            hits.map((hit) => [hit.object.id, hit.score]),
            expected,
            `${words.join(' ')} limit ${limit}`,
          );
          if (words.length === 1 && new RankedSearch(db).top(key, words[0] ?? '', limit) !== null) ranked++;
        }
      }
      assert.ok(ranked >= 4, `the store's threshold reached in ${ranked} queries`);
    } finally {
      db.close();
      await store.close();
    }
  });

  void it('a search file made before the ranked tables is rebuilt with them', async () => {
    const path = freshPath();
    const store = await filled(path, 5, 400);
    await store.close();
    // As an earlier build left it: no ranked tables.
    const old = new Database(searchFilePath(path));
    old.exec('DROP TABLE object_rank_len; DROP TABLE object_rank_repeat');
    old.close();
    const search = new Database(searchFilePath(path));
    try {
      prepareSearchFile(search);
      assert.equal(search.prepare('SELECT count(*) FROM search_state').pluck().get(), 0, 'state cleared: the worker rebuilds');
    } finally {
      search.close();
    }
    const again = openSqliteStore(path);
    try {
      await again.objects.search('r1', { words: ['mu'], limit: 5 });
      const db = reader(path);
      try {
        const entries = db.prepare('SELECT id FROM search.object_fts_docsize ORDER BY id').pluck().all();
        assert.deepEqual(db.prepare('SELECT id FROM search.object_rank_len ORDER BY id').pluck().all(), entries, 'one length per entry');
        const key = keyOf(db, 'r1');
        assert.deepEqual(new RankedSearch(db, 0).top(key, 'mu', 10), fts5Top(db, key, ['mu'], 10));
      } finally {
        db.close();
      }
    } finally {
      await again.close();
    }
  });
});
