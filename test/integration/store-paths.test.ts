/**
 * Where a store may be: the default data directory is created; a directory named in
 * LOCUS_STORE must already exist and be writable, or start-up stops naming the value.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../internal/config/config.js';
import { openStore } from '../../internal/store/open-store.js';
import { spawnServer } from '../support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'locus-paths-'));

describe('store paths', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a store whose directory does not exist, and creates nothing', async () => {
    const url = `sqlite:${join(dir, 'missing', 'deeper', 'x.db')}`;
    await assert.rejects(
      () => openStore(url),
      (err: unknown) =>
        err instanceof ConfigError && err.message === `LOCUS_STORE=${url}: directory ${join(dir, 'missing', 'deeper')} does not exist`,
    );
    assert.ok(!existsSync(join(dir, 'missing')));
  });

  it('refuses a store whose directory is a file', async () => {
    writeFileSync(join(dir, 'plain'), '');
    await assert.rejects(() => openStore(`sqlite:${join(dir, 'plain', 'x.db')}`), { name: 'ConfigError', message: /plain is not a directory$/ });
    await assert.rejects(() => openStore(`sqlite:${join(dir, 'plain', 'sub', 'x.db')}`), { name: 'ConfigError', message: /sub is not a directory$/ });
  });

  it('refuses a store whose directory is not writable', async () => {
    const locked = join(dir, 'locked');
    mkdirSync(locked, { mode: 0o555 });
    const url = `sqlite:${join(locked, 'x.db')}`;
    // Root writes anywhere: then the server runs as `nobody`, who may read the
    // (world-readable) build but not write here.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) chmodSync(dir, 0o755);
    try {
      const { code, stderr } = await spawnServer({ LOCUS_STORE: url }, asRoot ? { uid: 65534 } : {}).exited;
      assert.equal(code, 1, stderr);
      assert.equal(stderr, `locus: LOCUS_STORE=${url}: directory ${locked} is not writable\n`);
      assert.ok(!existsSync(join(locked, 'x.db')));
    } finally {
      chmodSync(locked, 0o755);
    }
  });

  it('stops the server with one line naming LOCUS_STORE when the directory is missing', async () => {
    const url = `sqlite:${join(dir, 'nowhere', 'x.db')}`;
    const { code, stderr } = await spawnServer({ LOCUS_STORE: url }).exited;
    assert.equal(code, 1);
    assert.equal(stderr, `locus: LOCUS_STORE=${url}: directory ${join(dir, 'nowhere')} does not exist\n`);
  });

  it('creates the default data directory', async () => {
    const cwd = join(dir, 'fresh');
    mkdirSync(cwd);
    const proc = spawnServer({ LOCUS_STORE: undefined }, { cwd });
    try {
      await proc.listening;
      assert.ok(existsSync(join(cwd, 'data', 'locus.db')));
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
});
