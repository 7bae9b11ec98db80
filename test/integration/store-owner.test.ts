/**
 * An SQLite store belongs to one server process: a second server on the same file
 * refuses to start and names the owner; a killed owner's claim does not block a restart;
 * the admin CLI works beside a running server.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../../internal/cli/admin-cli.js';
import { testConfig } from '../../internal/config/config.js';
import { start } from '../../internal/server.js';
import { spawnServer, type ServerProcess } from '../support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'locus-owner-'));
const running: ServerProcess[] = [];

function server(store: string): ServerProcess {
  const proc = spawnServer({ LOCUS_STORE: store });
  running.push(proc);
  return proc;
}

describe('store ownership', () => {
  after(async () => {
    for (const proc of running) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second server on the same file, naming the owner, and restarts after the owner is killed', async () => {
    const store = `sqlite:${join(dir, 'shared.db')}`;
    const first = server(store);
    await first.listening;

    const second = await server(store).exited;
    assert.equal(second.code, 1, second.stderr);
    assert.match(second.stderr, new RegExp(`^locus: .*in use by another locus server \\(pid ${first.pid} on host .*, started \\d{4}-`));
    assert.match(second.stderr, /stop that server, or give this one another LOCUS_STORE/);
    assert.equal(second.stderr.trim().split('\n').length, 1, 'one line, no stack trace');

    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(existsSync(join(dir, 'shared.db-owner.json')), 'a killed owner leaves its side file behind');
    await server(store).listening;
  });

  it('lets two servers run on different files', async () => {
    const a = server(`sqlite:${join(dir, 'a.db')}`);
    const b = server(`sqlite:${join(dir, 'b.db')}`);
    await Promise.all([a.listening, b.listening]);
  });

  it('refuses a second server in the same process until the first has closed', async () => {
    const store = `sqlite:${join(dir, 'inproc.db')}`;
    const first = await start(testConfig({ store }));
    try {
      await assert.rejects(start(testConfig({ store })), { name: 'ConfigError', message: new RegExp(`pid ${process.pid}`) });
    } finally {
      await first.close();
    }
    assert.ok(!existsSync(join(dir, 'inproc.db-owner.json')), 'closing the store gives the claim up');
    const again = await start(testConfig({ store }));
    await again.close();
  });

  it('lets the admin CLI manage realms beside a running server (it claims nothing)', async () => {
    const store = `sqlite:${join(dir, 'beside.db')}`;
    const owner = server(store);
    await owner.listening;
    let out = '';
    const io = { out: (line: string) => (out += line + '\n'), err: () => undefined };
    assert.equal(await runCli(['realm', 'create', 'fleet'], { LOCUS_STORE: store }, io), 0);
    out = '';
    assert.equal(await runCli(['realm', 'list'], { LOCUS_STORE: store }, io), 0);
    assert.deepEqual(Object.keys(JSON.parse(out) as object), ['fleet']);
  });
});
