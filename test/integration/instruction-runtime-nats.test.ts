/**
 * The instruction runtime across two server processes on one SQLite file with a real
 * nats-server as their bus: exactly one holds the realm's lease; a write stored by the other
 * reaches the holder through the change feed and fires there; when the holder shuts down, the
 * other takes the realm over at once (the lease is given back) and fires for later writes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken, call, makeRealm } from '../support/harness.js';
import { waitFor } from '../support/instruction-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { inProcessLogDestination } from '../support/test-logs.js';

describe('instruction runtime on NATS (two processes, one store)', () => {
  it('the holder fires for writes stored by the other; a clean shutdown hands the realm over', async () => {
    const nats = await startNatsServer();
    const dir = mkdtempSync(join(tmpdir(), 'locus-ins-nats-'));
    const destination = inProcessLogDestination();
    const options = destination === undefined ? {} : { logger: createLogger('debug', destination) };
    const base = { store: `sqlite:${join(dir, 'locus.db')}`, bus: nats.url, adminToken, instructionLeaseTtlMs: 1000, instructionLeaseRenewMs: 200 };
    const servers: RunningServer[] = [];
    try {
      servers.push(await start(testConfig({ ...base, processId: 'alpha' }), options));
      servers.push(await start(testConfig({ ...base, processId: 'beta' }), options));
      const [alpha, beta] = servers as [RunningServer, RunningServer];
      const tokens = await makeRealm(alpha.httpUrl, 'yard');
      const write = { token: tokens.write };
      const created = await call(alpha.httpUrl, 'POST', '/v2/realm/yard/instruction/tag', {
        ...write,
        body: { instruction: 'when object(type="trailer") then set("tagged", "yes") until set("tagged", "no")' },
      });
      assert.equal(created.status, 200, created.text);
      const holder = await waitFor('one holder', () => servers.find((s) => s.instructions.heldRealms().includes('yard')));
      const other = holder === alpha ? beta : alpha;
      // A few rounds later still one holder.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(other.instructions.heldRealms(), []);
      assert.deepEqual(holder.instructions.heldRealms(), ['yard']);

      // Written through the process that does not evaluate the realm.
      assert.equal((await call(other.httpUrl, 'PUT', '/v2/realm/yard/object/t1', { ...write, body: { data: { type: 'trailer' } } })).status, 200);
      const read = async (server: RunningServer, id: string): Promise<unknown> =>
        ((await call(server.httpUrl, 'GET', `/v2/realm/yard/object/${id}`, { token: tokens.read })).json as { data?: Record<string, unknown> }).data?.tagged;
      await waitFor('then on the holder', async () => (await read(other, 't1')) === 'yes');

      // The holder shuts down: the survivor takes over without waiting out the lease.
      const closedAt = Date.now();
      await holder.close();
      servers.splice(servers.indexOf(holder), 1);
      await waitFor('the takeover', () => other.instructions.heldRealms().includes('yard'), 3000);
      assert.ok(Date.now() - closedAt < 1000, `taken over after ${Date.now() - closedAt} ms`);
      assert.equal((await call(other.httpUrl, 'PUT', '/v2/realm/yard/object/t1', { ...write, body: { data: { type: 'car' } } })).status, 200);
      await waitFor('until on the new holder', async () => (await read(other, 't1')) === 'no');
      assert.equal((await call(other.httpUrl, 'PUT', '/v2/realm/yard/object/t2', { ...write, body: { data: { type: 'trailer' } } })).status, 200);
      await waitFor('then on the new holder', async () => (await read(other, 't2')) === 'yes');
      // t1's then ran once: its tag went yes, then no, and was not set to yes again by the takeover.
      assert.equal(await read(other, 't1'), 'no');
    } finally {
      for (const server of servers) await server.close();
      await nats.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
