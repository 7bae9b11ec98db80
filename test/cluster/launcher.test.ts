/**
 * `npm run cluster` as a person runs it (dist/cmd/cluster.js): the banner with the addresses
 * and the admin token, a realm made through the balancer, and Ctrl-C (SIGINT) stopping every
 * process and removing the temporary directory. Also its usage errors.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { call } from '../support/harness.js';

const script = fileURLToPath(new URL('../../cmd/cluster.js', import.meta.url));

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A base port whose whole layout for two processes (base .. base + 13) is free now. */
async function freeBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const ports = [0, 1, 2, 3, 10, 11, 12, 13].map((d) => base + d);
    const busy = await Promise.all(ports.map(accepts));
    if (busy.every((b) => !b)) return base;
  }
}

describe('npm run cluster', { timeout: 60_000 }, () => {
  it('prints usage for --help, and exits 2 naming a bad option', () => {
    const help = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage: npm run cluster/);
    const bad = spawnSync(process.execPath, [script, '--apis', 'many'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--apis must be a whole number, got "many"/);
  });

  it('starts nats-server, two API processes and HAProxy, prints where they are, and Ctrl-C stops them all', async () => {
    const base = await freeBase();
    const child = spawn(process.execPath, [script, '--apis', '2', '--base-port', String(base), '--no-install'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      while (!err.includes('Ctrl-C stops everything') && Date.now() < deadline && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(err, /Ctrl-C stops everything/, `no banner; stderr:\n${err}\nstdout:\n${out.slice(-3000)}`);
      assert.match(err, new RegExp(`HTTP and WebSocket +http://127\\.0\\.0\\.1:${base} `));
      assert.match(err, new RegExp(`v1 TCP +127\\.0\\.0\\.1:${base + 1}\\n`));
      assert.match(err, new RegExp(`api-2 +http://127\\.0\\.0\\.1:${base + 12} +TCP 127\\.0\\.0\\.1:${base + 13}`));
      const token = /admin token +(\S+)/.exec(err)?.[1] ?? '';
      const dataDir = /data directory +(\S+)/.exec(err)?.[1] ?? '';
      assert.ok(token.length >= 16 && existsSync(dataDir), err);
      // Output lines carry the process's name.
      assert.match(out, /^api-1 \| \{/m);
      assert.match(out, /^nats {2}\| /m);

      const created = await call(`http://127.0.0.1:${base}`, 'PUT', '/admin/v1/realm/launcher', { token });
      assert.equal(created.status, 200, created.text);
      const read = await call(`http://127.0.0.1:${base + 12}`, 'GET', '/admin/v1/realm/launcher', { token });
      assert.equal(read.status, 200, 'the realm made through the balancer is in the one store every process reads');

      child.kill('SIGINT');
      assert.equal(await exited, 0, err);
      assert.match(err, /locus cluster: stopped/);
      const listening = await Promise.all([0, 1, 2, 3, 10, 11, 12, 13].map((d) => accepts(base + d)));
      assert.deepEqual(listening, Array(8).fill(false), 'no process of the cluster is left listening');
      assert.equal(existsSync(dataDir), false, 'the temporary directory is removed');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
