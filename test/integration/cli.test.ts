/** The admin CLI on a real SQLite file, and its tokens working against a server on the same file. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { runCli } from '../../internal/cli/admin-cli.js';
import { testConfig } from '../../internal/config/config.js';
import { start } from '../../internal/server.js';
import { call } from '../support/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'locus-cli-'));
const store = `sqlite:${join(dir, 'locus.db')}`;

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { LOCUS_STORE: store }, { out: (l) => (out += l + '\n'), err: (l) => (err += l + '\n') });
  return { code, out, err };
}

describe('admin CLI', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a realm, issues a token the server accepts, lists and revokes', async () => {
    const created = await cli('realm', 'create', 'fleet', '--connection-timeout', '45', '--create');
    assert.equal(created.code, 0, created.err);
    assert.deepEqual(JSON.parse(created.out), {
      id: 'fleet',
      result: 'success',
      settings: { connectionTimeout: 45, historyRetentionDays: 30, rateLimit: null },
    });
    const token = await cli('token', 'create', 'fleet', '--scope', 'write');
    assert.equal(token.code, 0, token.err);
    const issued = JSON.parse(token.out) as { id: string; token: string; scope: string };
    assert.equal(issued.scope, 'write');

    const server = await start(testConfig({ store }));
    try {
      const put = await call(server.httpUrl, 'PUT', '/v2/realm/fleet/object/x', { token: issued.token, body: { label: 'X' } });
      assert.equal(put.status, 200);
    } finally {
      await server.close();
    }

    const list = await cli('token', 'list', 'fleet');
    assert.deepEqual((JSON.parse(list.out) as { id: string }[]).map((t) => t.id), [issued.id]);
    assert.equal((await cli('token', 'revoke', 'fleet', issued.id)).code, 0);
    assert.deepEqual(JSON.parse((await cli('token', 'list', 'fleet')).out), []);
    const realms = JSON.parse((await cli('realm', 'list')).out) as Record<string, unknown>;
    assert.deepEqual(Object.keys(realms), ['fleet']);
    assert.equal((await cli('realm', 'delete', 'fleet', '--yes')).code, 0);
    assert.deepEqual(JSON.parse((await cli('realm', 'list')).out), {});
  });

  it('reports errors with an exit code and changes nothing', async () => {
    const bad = await cli('token', 'create', 'nowhere', '--scope', 'write');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /unknown realm nowhere/);
    const scope = await cli('realm', 'create', 'r', '--connection-timeout', 'soon');
    assert.equal(scope.code, 2);
    const unknown = await cli('realm', 'explode');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command/);
    assert.deepEqual(JSON.parse((await cli('realm', 'list')).out), {});
  });

  it('runs as the locus command', async () => {
    const bin = new URL('../../cmd/cli.js', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'realm', 'create', 'viaexec'], {
      env: { ...process.env, LOCUS_STORE: store },
    });
    assert.equal((JSON.parse(stdout) as { id: string }).id, 'viaexec');
  });
});
