/**
 * The lease keeper (instructions/engine/lease-keeper.ts) with a lease store that keeps the
 * port's rules in memory and a clock the test moves: one holder per realm, takeover once the
 * lease has expired, a realm let go when it has no instructions, engines stopped when the
 * store stops confirming the lease, leases given back on close. (The SQLite lease store itself
 * is held to the same rules by the store contract tests, and the runtime's integration test
 * runs two keepers on one SQLite file.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Lease } from '../../internal/domain/instruction.js';
import { LeaseKeeper, leaseName, type HeldRealm } from '../../internal/instructions/engine/lease-keeper.js';
import type { LeaseStore } from '../../internal/store/port.js';

class MemoryLeases implements LeaseStore {
  readonly leases = new Map<string, Lease>();
  down = false;

  acquire(name: string, holder: string, ttlMs: number, now: string): Promise<Lease> {
    if (this.down) return Promise.reject(new Error('store down'));
    const current = this.leases.get(name);
    if (current === undefined || current.holder === holder || current.expires <= now) {
      const lease = { name, holder, expires: new Date(Date.parse(now) + ttlMs).toISOString() };
      this.leases.set(name, lease);
      return Promise.resolve(lease);
    }
    return Promise.resolve(current);
  }

  release(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name);
    return Promise.resolve();
  }
}

interface World {
  leases: MemoryLeases;
  realms: Set<string>;
  now: number;
  listDown: boolean;
}

function keeper(world: World, processId: string): { keeper: LeaseKeeper; running: Set<string>; starts: string[]; held: string[] } {
  const running = new Set<string>();
  const starts: string[] = [];
  const held: string[] = [];
  const k = new LeaseKeeper({
    processId,
    instructions: {
      realmsWithInstructions: () => (world.listDown ? Promise.reject(new Error('store down')) : Promise.resolve([...world.realms])),
    },
    leases: world.leases,
    clock: () => world.now,
    ttlMs: 10_000,
    renewMs: 2000,
    startRealm: (realm): HeldRealm => {
      running.add(realm);
      starts.push(realm);
      return {
        stop: () => {
          running.delete(realm);
          return Promise.resolve();
        },
      };
    },
    onHeld: (realm, isHeld) => held.push(`${isHeld ? '+' : '-'}${realm}`),
    onError: () => undefined,
  });
  return { keeper: k, running, starts, held };
}

const newWorld = (): World => ({ leases: new MemoryLeases(), realms: new Set(['r1', 'r2']), now: Date.parse('2026-05-01T00:00:00.000Z'), listDown: false });

describe('instruction lease keeper', () => {
  it('one process holds each realm; the other takes over once the lease has expired, and the first then stops', async () => {
    const world = newWorld();
    const a = keeper(world, 'a');
    const b = keeper(world, 'b');
    await a.keeper.runRound();
    await b.keeper.runRound();
    assert.deepEqual([...a.running].sort(), ['r1', 'r2']);
    assert.deepEqual([...b.running], []);
    assert.equal(world.leases.leases.get(leaseName('r1'))?.holder, 'a');
    // a renews within the lease time: b still gets nothing.
    world.now += 8000;
    await a.keeper.runRound();
    world.now += 8000;
    await b.keeper.runRound();
    assert.deepEqual([...b.running], []);
    // a stops renewing (it died): after the lease time b takes both realms.
    world.now += 10_001;
    await b.keeper.runRound();
    assert.deepEqual([...b.running].sort(), ['r1', 'r2']);
    // a comes back: the store names b, so a stops its engines.
    await a.keeper.runRound();
    assert.deepEqual([...a.running], []);
    assert.deepEqual(a.held, ['+r1', '+r2', '-r1', '-r2']);
  });

  it('a realm that no longer has instructions is let go and its lease given back; close gives back the rest', async () => {
    const world = newWorld();
    const a = keeper(world, 'a');
    await a.keeper.runRound();
    world.realms.delete('r2');
    await a.keeper.runRound();
    assert.deepEqual([...a.running], ['r1']);
    assert.equal(world.leases.leases.has(leaseName('r2')), false);
    const b = keeper(world, 'b');
    await a.keeper.close();
    assert.deepEqual([...a.running], []);
    assert.equal(world.leases.leases.size, 0);
    // Given back at once: b takes r1 on its next round, no lease time to wait.
    await b.keeper.runRound();
    assert.deepEqual([...b.running], ['r1']);
    // A closed keeper runs no more rounds.
    await a.keeper.runRound();
    assert.deepEqual([...a.running], []);
  });

  it('a realm heard of (its first instruction was just created) is looked at at once, not at the next round', async () => {
    const world = newWorld();
    world.realms.clear();
    const a = keeper(world, 'a');
    // Not started yet: nothing to hurry.
    a.keeper.hear('fresh');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([...a.running], []);
    a.keeper.start();
    await a.keeper.runRound();
    assert.deepEqual([...a.running], []);
    world.realms.add('fresh');
    a.keeper.hear('fresh');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([...a.running], ['fresh']);
    await a.keeper.close();
  });

  it('while the store does not answer, engines stop before another process could take their realms over', async () => {
    const world = newWorld();
    const a = keeper(world, 'a');
    await a.keeper.runRound();
    world.listDown = true;
    world.leases.down = true;
    // Within the lease time (less a renew period) the engines keep running.
    world.now += 7000;
    await a.keeper.runRound();
    assert.deepEqual([...a.running].sort(), ['r1', 'r2']);
    world.now += 1500;
    await a.keeper.runRound();
    assert.deepEqual([...a.running], []);
    // The store answers again: the lease is still a's (nobody took it), the engines start again.
    world.listDown = false;
    world.leases.down = false;
    await a.keeper.runRound();
    assert.deepEqual([...a.running].sort(), ['r1', 'r2']);
    assert.deepEqual(a.starts, ['r1', 'r2', 'r1', 'r2']);
  });

  it('restart stops a failed engine; the next round starts a new one while the lease is still held', async () => {
    const world = newWorld();
    const a = keeper(world, 'a');
    await a.keeper.runRound();
    a.keeper.restart('r1');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([...a.running], ['r2']);
    await a.keeper.runRound();
    assert.deepEqual([...a.running].sort(), ['r1', 'r2']);
    assert.deepEqual(a.starts, ['r1', 'r2', 'r1']);
  });
});
