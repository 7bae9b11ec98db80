/**
 * Instructions in the embedded server, end to end over REST: an instruction created through
 * the API runs (the server's own runtime takes the realm's lease), its writes are ordinary
 * writes that clients read back, and /metrics shows the lease and the work.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { call, makeRealm, startHarness } from '../support/harness.js';
import { waitFor } from '../support/instruction-process.js';

describe('instructions in the server', () => {
  it('a REST-created instruction sets data on the objects that join and leave; /metrics shows the lease held', async () => {
    const h = await startHarness({ processId: 'server-one' });
    try {
      const tokens = await makeRealm(h.url, 'fleet');
      const write = { token: tokens.write };
      const created = await call(h.url, 'POST', '/v2/realm/fleet/instruction/charge', {
        ...write,
        body: { label: 'charge', instruction: 'when object(type="scooter", charge<10) then set("needsCharging", "true") until set("needsCharging", "false")' },
      });
      assert.equal(created.status, 200, created.text);
      assert.equal((await call(h.url, 'PUT', '/v2/realm/fleet/object/s1', { ...write, body: { data: { type: 'scooter', charge: 5 } } })).status, 200);
      const flagged = await waitFor('then', async () => {
        const data = (await call(h.url, 'GET', '/v2/realm/fleet/object/s1', { token: tokens.read })).json.data as Record<string, unknown> | undefined;
        return data?.needsCharging === 'true' ? data : null;
      });
      assert.equal(flagged.charge, 5);
      assert.equal((await call(h.url, 'PUT', '/v2/realm/fleet/object/s1', { ...write, body: { data: { charge: 90 } } })).status, 200);
      await waitFor('until', async () => (await call(h.url, 'GET', '/v2/realm/fleet/object/s1', { token: tokens.read })).json.data?.needsCharging === 'false');
      assert.deepEqual(h.server.instructions.heldRealms(), ['fleet']);
      assert.equal(h.server.instructions.processId, 'server-one');
      const metrics = (await call(h.url, 'GET', '/metrics')).text;
      assert.match(metrics, /locus_instruction_lease_held\{realm="fleet"\} 1/);
      assert.match(metrics, /locus_instruction_entries_total\{change="joined",realm="fleet"\} 1/);
      assert.match(metrics, /locus_instruction_entries_total\{change="left",realm="fleet"\} 1/);
      assert.match(metrics, /locus_instruction_actions_total\{kind="set",outcome="ok"\} 2/);
      // The realm's first instruction: the engine starts with it, and its first rescan is the start's repair.
      assert.match(metrics, /locus_instruction_evaluations_total\{trigger="repair",realm="fleet"\} 1/);
      assert.match(metrics, /locus_instruction_evaluations_total\{trigger="change",realm="fleet"\} [1-9]/);
    } finally {
      await h.stop();
    }
  });

  it('a restarted server neither fires then again nor loses the until of an entry that left meanwhile', async () => {
    const h = await startHarness();
    try {
      const tokens = await makeRealm(h.url, 'depot');
      const write = { token: tokens.write };
      await call(h.url, 'POST', '/v2/realm/depot/instruction/mark', { ...write, body: { instruction: 'when object(zone="a") then set("inA", "yes") until set("inA", "no")' } });
      await call(h.url, 'PUT', '/v2/realm/depot/object/v1', { ...write, body: { data: { zone: 'a' } } });
      await waitFor('then', async () => (await call(h.url, 'GET', '/v2/realm/depot/object/v1', { token: tokens.read })).json.data?.inA === 'yes');
      // A client clears the mark by hand; a second then would set it again.
      await call(h.url, 'PUT', '/v2/realm/depot/object/v1', { ...write, body: { data: { inA: null } } });
      await h.restart();
      await waitFor('the restarted engine', () => h.server.instructions.heldRealms().includes('depot'));
      const engine = await waitFor('its engine', () => h.server.instructions.engineOf('depot'));
      await engine.idle();
      assert.equal((await call(h.url, 'GET', '/v2/realm/depot/object/v1', { token: tokens.read })).json.data?.inA, undefined);
      await call(h.url, 'PUT', '/v2/realm/depot/object/v1', { ...write, body: { data: { zone: 'b' } } });
      await waitFor('until', async () => (await call(h.url, 'GET', '/v2/realm/depot/object/v1', { token: tokens.read })).json.data?.inA === 'no');
    } finally {
      await h.stop();
    }
  });
});
