/** The admin CLI on a real SQLite file, and its tokens working against a server on the same file. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { runCli } from '../../internal/cli/admin-cli.js';
import { testConfig } from '../../internal/config/config.js';
import { start } from '../../internal/server.js';
import { SignJWT } from 'jose';
import { call } from '../support/harness.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { openNatsBus, type NatsBus } from '../../internal/events/nats-bus.js';
import type { ControlMessage, RealmChangedEvent } from '../../internal/domain/events.js';
import { hashSecret } from '../../internal/auth/tokens.js';
import { defaultTenant } from '../../internal/auth/principal.js';

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

describe('admin CLI: tenants and signing keys', () => {
  const tenantDir = mkdtempSync(join(tmpdir(), 'locus-cli-tenants-'));
  const tenantStore = `sqlite:${join(tenantDir, 'locus.db')}`;
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(argv, { LOCUS_STORE: tenantStore }, { out: (l) => (out += l + '\n'), err: (l) => (err += l + '\n') });
    return { code, out, err };
  }
  after(() => rmSync(tenantDir, { recursive: true, force: true }));

  it('creates a tenant, a key the server accepts JWTs of, a tenant realm; refuses to delete a tenant with realms', async () => {
    assert.equal((await cli('tenant', 'create', 'acme', '--label', 'Acme Inc.', '--create')).code, 0);
    const key = await cli('key', 'create', 'acme');
    assert.equal(key.code, 0, key.err);
    const issued = JSON.parse(key.out) as { id: string; secret: string; tenant: string; realm: string | null };
    assert.deepEqual([issued.tenant, issued.realm], ['acme', null]);
    const realm = await cli('realm', 'create', 'fleet', '--tenant', 'acme');
    assert.equal(realm.code, 0, realm.err);
    assert.equal((JSON.parse(realm.out) as { id: string }).id, 'fleet');
    assert.deepEqual(Object.keys(JSON.parse((await cli('realm', 'list', '--tenant', 'acme')).out) as object), ['fleet']);

    const server = await start(testConfig({ store: tenantStore }));
    try {
      const token = await new SignJWT({ sub: 'cli-test' })
        .setProtectedHeader({ alg: 'HS256', kid: issued.id })
        .sign(new TextEncoder().encode(issued.secret));
      const read = await call(server.httpUrl, 'GET', '/v2/realm/fleet', { token });
      assert.equal(read.status, 200, read.text);
    } finally {
      await server.close();
    }

    const shown = await cli('tenant', 'show', 'acme');
    assert.ok(!shown.out.includes(issued.secret), 'secrets are never shown again');
    assert.deepEqual((JSON.parse(shown.out) as { realms: string[] }).realms, ['fleet']);
    const refused = await cli('tenant', 'delete', 'acme');
    assert.equal(refused.code, 1);
    assert.match(refused.err, /still has realms/);
    const rotated = await cli('key', 'rotate', 'acme', issued.id);
    assert.equal(rotated.code, 0, rotated.err);
    assert.equal((JSON.parse(rotated.out) as { replaced: string }).replaced, issued.id);
    assert.deepEqual((JSON.parse((await cli('key', 'list', 'acme')).out) as { id: string }[]).length, 1);
    assert.equal((await cli('realm', 'delete', 'fleet', '--tenant', 'acme', '--yes')).code, 0);
    assert.equal((await cli('tenant', 'delete', 'acme')).code, 0);
    assert.equal((await cli('tenant', 'show', 'acme')).code, 1);
    assert.equal((await cli('tenant', 'create', 'Bad_Id')).code, 1);
  });
});

describe('admin CLI on a shared bus (LOCUS_BUS nats://…)', () => {
  const busDir = mkdtempSync(join(tmpdir(), 'locus-cli-bus-'));
  const busStore = `sqlite:${join(busDir, 'locus.db')}`;
  let nats: NatsServer;
  let watcher: NatsBus;
  const heard: ControlMessage[] = [];
  const realmEvents: RealmChangedEvent[] = [];
  before(async () => {
    nats = await startNatsServer();
    watcher = await openNatsBus({ servers: [nats.url] });
    watcher.subscribeControl((message) => heard.push(message));
    watcher.subscribeTenant(defaultTenant, (event) => realmEvents.push(event));
    await watcher.flush();
  });
  after(async () => {
    await watcher?.close();
    await nats?.stop();
    rmSync(busDir, { recursive: true, force: true });
  });
  async function cli(env: Record<string, string>, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(argv, { LOCUS_STORE: busStore, ...env }, { out: (l) => (out += l + '\n'), err: (l) => (err += l + '\n') });
    return { code, out, err };
  }
  async function until<T>(what: string, found: () => T | undefined): Promise<T> {
    for (let waited = 0; waited < 5000; waited += 20) {
      const value = found();
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`not heard within 5 s: ${what}`);
  }

  it('announces a revoked token and a deleted realm there: a server on the bus refuses the token at once, subscribers hear the delete', async () => {
    const bus = { LOCUS_BUS: nats.url };
    assert.equal((await cli(bus, 'realm', 'create', 'fleet', '--create')).code, 0);
    const issued = JSON.parse((await cli(bus, 'token', 'create', 'fleet', '--scope', 'write')).out) as { id: string; token: string };
    const server = await start(testConfig({ store: busStore, bus: nats.url }));
    try {
      // The server now holds the token's sign-in (auth/held-lookups.ts).
      assert.equal((await call(server.httpUrl, 'PUT', '/v2/realm/fleet/object/x', { token: issued.token, body: { label: 'X' } })).status, 200);
      const revoked = await cli(bus, 'token', 'revoke', 'fleet', issued.id);
      assert.equal(revoked.code, 0, revoked.err);
      const hash = hashSecret(issued.token);
      await until('token.revoked', () => heard.find((m) => m.kind === 'token.revoked' && m.hash === hash));
      // The server heard it too (at about the same moment: polled, not raced) and refuses the token.
      let status = 0;
      for (let tries = 0; tries < 100 && status !== 401; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        status = (await call(server.httpUrl, 'GET', '/v2/realm/fleet/object/x', { token: issued.token })).status;
      }
      assert.equal(status, 401);

      assert.equal((await cli(bus, 'realm', 'delete', 'fleet', '--yes')).code, 0);
      const deleted = await until('rea del', () => realmEvents.find((e) => e.act === 'del' && e.name === 'fleet'));
      assert.equal(deleted.record, null);
      await until('realm.changed', () => heard.find((m) => m.kind === 'realm.changed'));
    } finally {
      await server.close();
    }
  });

  it('does its work when the bus cannot be reached, and says so on stderr without the URL', async () => {
    const down = await startNatsServer();
    await down.stop();
    const url = `nats://user:s3cret@127.0.0.1:${down.port}`;
    const created = await cli({ LOCUS_BUS: url }, 'realm', 'create', 'yard', '--create');
    assert.equal(created.code, 0, created.err);
    assert.match(created.err, /the event bus \(LOCUS_BUS\) cannot be reached/);
    assert.ok(!created.err.includes('s3cret'), created.err);
    assert.deepEqual(Object.keys(JSON.parse((await cli({}, 'realm', 'list')).out) as object), ['yard']);
  });
});
