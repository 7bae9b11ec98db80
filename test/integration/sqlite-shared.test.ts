/**
 * Several processes on one SQLite file (store-owner.ts `shared`, for servers whose events
 * go over NATS): two writer processes write the same and their own objects at once, with
 * no busy error and no write lost; each sees the other's writes, in its reads and in the
 * state its own writes start from (RecentObjects, the spatial index); both run the
 * background work (checkpoints, the full-text indexer, retention) on the same file.
 * Claims: shared claims go together, an exclusive one goes with no other.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { claimStore } from '../../internal/store/sqlite/store-owner.js';
import { BASE_MS, COMMON, CUT_ROUND, OWN, REALM, type WriterReport } from '../support/shared-writer.js';

const writerScript = fileURLToPath(new URL('../support/shared-writer.js', import.meta.url));
const openerScript = fileURLToPath(new URL('../support/store-opener.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'locus-shared-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };
const NOW = '2024-05-01T12:00:00.000Z';
const fix = (longitude: number, second: number): { longitude: number; latitude: number; time: string } => ({
  longitude,
  latitude: 1,
  time: new Date(Date.parse('2024-05-01T10:00:00.000Z') + second * 1000).toISOString(),
});

function runWriter(file: string, name: string, rounds: number): Promise<WriterReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writerScript, file, name, String(rounds)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`writer ${name} exited with ${String(code)}: ${err}`));
      else resolve(JSON.parse(out) as WriterReport);
    });
  });
}

/** What a store-opener process printed. */
function runOpener(file: string, at: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [openerScript, file, String(at)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => resolve(out.trim()));
  });
}

void describe('sqlite store shared by several processes', () => {
  void it('four processes open one new file at the same instant, ten times over: every open succeeds (WAL switch retried, schema.ts enableWal)', async () => {
    // Without the retry, about one open in twelve failed here with SQLITE_BUSY: switching a
    // new file to WAL takes a lock SQLite does not wait for.
    for (let round = 0; round < 10; round++) {
      const file = join(dir, `open-${round}.db`);
      const at = Date.now() + 500;
      const outcomes = await Promise.all(Array.from({ length: 4 }, () => runOpener(file, at)));
      assert.deepEqual(outcomes, ['ok', 'ok', 'ok', 'ok'], `round ${round}`);
    }
  });

  void it('two processes write the same and their own objects at once: no busy error, no write lost, each sees the other', async () => {
    const file = join(dir, 'two.db');
    const rounds = 120;
    // Both open the new file at once: the migrations run once, whoever comes first.
    const reports = await Promise.all([runWriter(file, 'a', rounds), runWriter(file, 'b', rounds)]);
    for (const report of reports) {
      assert.deepEqual(report.errors, [], `writer ${report.name}`);
      // Each one's updates started from the other's last state, not its own held one.
      assert.deepEqual(report.stale, [], `writer ${report.name}`);
      // Each one's full-text indexer applied the other's writes too.
      assert.deepEqual(report.found.a, Array.from({ length: OWN }, (_, i) => `a-${i}`).sort(), `writer ${report.name} finds a's words`);
      assert.deepEqual(report.found.b, Array.from({ length: OWN }, (_, i) => `b-${i}`).sort(), `writer ${report.name} finds b's words`);
    }
    // Both pruned the realm at once: every fix before the cut went once.
    assert.equal(reports.reduce((sum, report) => sum + report.pruned, 0), COMMON * 2 * CUT_ROUND + 2 * OWN * CUT_ROUND);

    const store = openSqliteStore(file, { ownership: 'shared' });
    try {
      const last = new Date(BASE_MS + (rounds - 1) * 2 + 1).toISOString();
      for (let i = 0; i < COMMON; i++) {
        const obj = await store.objects.get(REALM, `common-${i}`);
        // The newest fix is b's last (odd milliseconds); data merged from both, and both checks.
        assert.equal(obj?.location?.time, last);
        assert.deepEqual(obj?.data, { by_a: rounds - 1, by_b: rounds - 1, checked_a: true, checked_b: true });
        const history = await store.objects.history(REALM, `common-${i}`, { limit: 10_000, order: 'asc' });
        const times = history.items.map((entry) => entry.location.time);
        // Every fix of both writers from the cut on, each once, in time order.
        assert.equal(times.length, 2 * (rounds - CUT_ROUND), `common-${i}`);
        assert.deepEqual(times, Array.from({ length: 2 * (rounds - CUT_ROUND) }, (_, k) => new Date(BASE_MS + 2 * CUT_ROUND + k).toISOString()));
      }
      for (const name of ['a', 'b']) {
        for (let i = 0; i < OWN; i++) {
          const history = await store.objects.history(REALM, `${name}-${i}`, { limit: 10_000, order: 'asc' });
          assert.equal(history.items.length, rounds - CUT_ROUND, `${name}-${i}`);
        }
      }
    } finally {
      await store.close();
    }
  });

  void it('two stores on one file: each one\'s writes start from the other\'s state, and its reads and spatial index see it', async () => {
    const file = join(dir, 'pair.db');
    const a = openSqliteStore(file, { ownership: 'shared' });
    const b = openSqliteStore(file, { ownership: 'shared' });
    try {
      await a.realms.put('r', SETTINGS, NOW);
      await a.objects.upsertMany('r', [{ id: 'x', location: fix(1, 0), data: { n: 1 } }], NOW);
      // x is now held by a (its second write: RecentObjects holds updated objects).
      await a.objects.upsertMany('r', [{ id: 'x', location: fix(2, 1) }], NOW);
      const [moved] = await b.objects.upsertMany('r', [{ id: 'x', location: fix(50, 2), data: { n: 2 } }, { id: 'y', location: fix(51, 2) }], NOW);
      assert.deepEqual(moved?.old?.location, fix(2, 1));
      const [again] = await a.objects.upsertMany('r', [{ id: 'x', mustExist: true, location: fix(3, 3) }], NOW);
      assert.deepEqual(again?.old?.location, fix(50, 2), 'a starts from b\'s write, not from what it held');
      assert.deepEqual(again?.new?.data, { n: 2 });
      // a's spatial index holds b's moves: a shape around longitude 50.
      const near = await a.objects.list('r', { limit: 10, shape: { w: 49, s: 0, e: 52, n: 2 } });
      assert.deepEqual(near.items.map((obj) => obj.id), ['y']);
      const history = await a.objects.history('r', 'x', { limit: 10, order: 'asc' });
      assert.deepEqual(history.items.map((entry) => entry.location.longitude), [1, 2, 50, 3]);
      // A realm deleted by one is gone for the other's writes too.
      assert.equal(await b.realms.delete('r'), true);
      await assert.rejects(a.objects.upsertMany('r', [{ id: 'z', location: fix(1, 4) }], NOW), { code: 'not_found' });
      assert.equal(await a.objects.get('r', 'z'), null);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  void it('shared claims go together; an exclusive claim goes with no other, and says whose claim is in the way', () => {
    const file = join(dir, 'claims.db');
    const first = claimStore(file, 'LOCUS_STORE=x', 'shared');
    const second = claimStore(file, 'LOCUS_STORE=x', 'shared');
    assert.throws(() => claimStore(file, 'LOCUS_STORE=x', 'exclusive'), {
      name: 'ConfigError',
      message: /in use by another locus server \(pid \d+ on host .*, sharing it over LOCUS_BUS=nats\)/,
    });
    first.release();
    second.release();
    const alone = claimStore(file, 'LOCUS_STORE=x', 'exclusive');
    try {
      assert.throws(() => claimStore(file, 'LOCUS_STORE=x', 'shared'), {
        name: 'ConfigError',
        message: new RegExp(`owned by a locus server with the local event bus \\(pid ${process.pid} .*run every server on this file with LOCUS_BUS=nats`),
      });
    } finally {
      alone.release();
    }
  });
});
