/**
 * The server on the NATS bus (LOCUS_BUS=nats://…): it starts on it, /readyz names an
 * outage in its detail while reads and writes keep working, and start-up fails clearly
 * when no NATS server answers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testConfig } from '../../internal/config/config.js';
import { start } from '../../internal/server.js';
import { adminToken, call, startHarness, type Harness } from '../support/harness.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

describe('server on the NATS bus', () => {
  let nats: NatsServer;
  let h: Harness;
  before(async () => {
    nats = await startNatsServer();
    h = await startHarness({ bus: nats.url });
  });
  after(async () => {
    await h.stop();
    await nats.stop();
  });

  /** Polls /readyz until `check` holds; returns that answer. */
  async function readyzUntil(check: (json: { status: string; detail?: string }) => boolean, what: string): Promise<{ status: number; json: { status: string; detail?: string } }> {
    const until = Date.now() + 10_000;
    for (;;) {
      const reply = await call(h.url, 'GET', '/readyz');
      if (check(reply.json)) return reply;
      if (Date.now() > until) assert.fail(`timed out waiting for ${what}; last /readyz: ${reply.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('is ready, and names a NATS outage in /readyz while writes keep working; the detail goes after reconnect', async () => {
    assert.deepEqual((await call(h.url, 'GET', '/readyz')).json, { status: 'ready' });
    await nats.kill();
    const down = await readyzUntil((json) => json.detail !== undefined, 'the outage in /readyz');
    assert.equal(down.status, 200);
    assert.equal(down.json.status, 'ready');
    assert.match(String(down.json.detail), /^event bus: nats disconnected since /);
    // Writes go on (their events are buffered for the other processes).
    const put = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { settings: { connectionTimeout: 30 } } });
    assert.equal(put.status, 200, put.text);
    await nats.restart();
    const up = await readyzUntil((json) => json.detail === undefined, 'the detail to go');
    assert.deepEqual(up.json, { status: 'ready' });
  });

  it('refuses to start, naming the servers, when no NATS server answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-bus-'));
    try {
      await assert.rejects(
        start(testConfig({ store: `sqlite:${join(dir, 'x.db')}`, bus: 'nats://127.0.0.1:1' })),
        /cannot reach NATS at nats:\/\/127\.0\.0\.1:1/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
