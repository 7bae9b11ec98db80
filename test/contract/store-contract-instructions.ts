/**
 * The store contract, instructions part: instruction records, the engine's state for them
 * (membership of each `when` set and the pending actions, the outbox) and store leases. Run
 * by storeContract (store-contract.ts) against every adapter; expected values written out by hand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import type { InstructionRecord, PendingAction } from '../../internal/domain/instruction.js';
import type { Store } from '../../internal/store/port.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const N2 = '2024-05-01T12:00:02.000Z';

type WithStore = (body: (store: Store) => Promise<void>) => Promise<void>;

function instruction(id: string, overrides: Partial<InstructionRecord> = {}): InstructionRecord {
  return { id, label: null, source: `when object(kind="${id}") then delete()`, data: {}, created: N0, updated: N0, generation: 1, suspended: null, ...overrides };
}

function action(key: string, instruction: string, entries: string[], overrides: Partial<PendingAction> = {}): PendingAction {
  return { key, instruction, generation: 1, part: 'then', entries, created: N0, attempts: 0, ...overrides };
}

const keys = (actions: readonly PendingAction[]): string[] => actions.map((a) => a.key);

/** A realm holding instruction `a` with members x, y and one pending action, for the delete tests. */
async function seeded(store: Store, realm: string): Promise<void> {
  await store.realms.put(realm, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N0);
  await store.instructions.create(realm, instruction('a'));
  await store.instructions.applyMembership(realm, [{ instruction: 'a', generation: 1, joined: ['x', 'y'], left: [] }], [action('k1', 'a', ['x', 'y'])]);
}

export function instructionContract(withStore: WithStore): void {
  void describe('instructions', () => {
    void it('create then get reads the record back exactly; list is in creation order; count counts', () =>
      withStore(async (store) => {
        const data = JSON.parse('{"z":1,"nested":{"b":[1,{"c":null}]},"__proto__":{"x":true}}') as InstructionRecord['data'];
        const first = instruction('zeta', { label: 'Zeta', data, suspended: null });
        await store.instructions.create('r', first);
        await store.instructions.create('r', instruction('alpha', { created: N1, updated: N1 }));
        await store.instructions.create('r', instruction('mid', { generation: 4, suspended: 'keeps failing' }));
        await store.instructions.create('other', instruction('alpha'));
        const read = await store.instructions.get('r', 'zeta');
        assert.deepEqual(read, first);
        assert.equal(JSON.stringify(read?.data), JSON.stringify(data));
        assert.ok(Object.hasOwn(read?.data ?? {}, '__proto__'));
        assert.deepEqual(await store.instructions.get('r', 'mid'), instruction('mid', { generation: 4, suspended: 'keeps failing' }));
        assert.equal(await store.instructions.get('r', 'nope'), null);
        assert.equal(await store.instructions.get('elsewhere', 'zeta'), null);
        assert.deepEqual(
          (await store.instructions.list('r')).map((i) => i.id),
          ['zeta', 'alpha', 'mid'],
        );
        assert.deepEqual(await store.instructions.list('empty'), []);
        assert.equal(await store.instructions.count('r'), 3);
        assert.equal(await store.instructions.count('other'), 1);
        assert.equal(await store.instructions.count('empty'), 0);
      }));

    void it('create with an existing id is a 409 with the v1 text and changes nothing', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a', { label: 'first' }));
        await assert.rejects(store.instructions.create('r', instruction('a', { label: 'second', source: 'when object() then delete()' })), (err: unknown) => {
          assert.ok(err instanceof LocusError);
          assert.equal(err.code, 'conflict');
          assert.equal(err.message, 'instruction with id a already exists');
          return true;
        });
        assert.deepEqual(await store.instructions.list('r'), [instruction('a', { label: 'first' })]);
      }));

    void it('concurrent creates in a new realm: of different ids all succeed, of one id exactly one', () =>
      withStore(async (store) => {
        const ids = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
        await Promise.all(ids.map((id) => store.instructions.create('fresh', instruction(id))));
        assert.deepEqual((await store.instructions.list('fresh')).map((i) => i.id).sort(), ids);
        const outcomes = await Promise.allSettled(ids.map((id) => store.instructions.create('same', instruction('x', { label: id }))));
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
        for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof LocusError && outcome.reason.code === 'conflict');
        assert.equal(await store.instructions.count('same'), 1);
      }));

    void it('update merges data at the top level (null removes a key), sets the label, stamps `updated`; keeps generation and state', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a', { label: 'A', data: { keep: 1, drop: 'x', nested: { a: 1 } } }));
        await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['x'], left: [] }], [action('k1', 'a', ['x'])]);
        const expected = instruction('a', { label: 'A', data: { keep: 1, nested: { b: 2 }, added: true }, updated: N1 });
        assert.deepEqual(await store.instructions.update('r', 'a', { data: { drop: null, nested: { b: 2 }, added: true } }, N1), expected);
        assert.deepEqual(await store.instructions.get('r', 'a'), expected);
        // The same source sent again (clients repeat it with a data update) restarts nothing.
        const relabelled = await store.instructions.update('r', 'a', { label: null, source: expected.source, suspended: 'failing' }, N2);
        assert.deepEqual(relabelled, { ...expected, label: null, updated: N2, suspended: 'failing' });
        assert.deepEqual(await store.instructions.members('r', 'a'), ['x']);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['k1']);
        assert.equal(await store.instructions.update('r', 'nope', { label: 'x' }, N1), null);
        assert.equal(await store.instructions.get('r', 'nope'), null);
      }));

    void it('a new source bumps the generation, clears the suspension, and drops members and pending actions', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a', { suspended: 'keeps failing' }));
        await store.instructions.create('r', instruction('b'));
        await store.instructions.applyMembership(
          'r',
          [
            { instruction: 'a', generation: 1, joined: ['x', 'y'], left: [] },
            { instruction: 'b', generation: 1, joined: ['x'], left: [] },
          ],
          [action('k1', 'a', ['x', 'y']), action('k2', 'b', ['x'])],
        );
        const updated = await store.instructions.update('r', 'a', { source: 'when object(kind="new") then delete()' }, N1);
        assert.deepEqual(updated, instruction('a', { source: 'when object(kind="new") then delete()', generation: 2, updated: N1 }));
        assert.deepEqual(await store.instructions.get('r', 'a'), updated);
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        assert.deepEqual(await store.instructions.members('r', 'b'), ['x']);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['k2']);
        // The old generation's changes no longer apply; the new one's do.
        await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['old'], left: [] }], [action('k3', 'a', ['old'])]);
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 2, joined: ['new'], left: [] }], [action('k4', 'a', ['new'], { generation: 2 })]);
        assert.deepEqual(await store.instructions.members('r', 'a'), ['new']);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['k2', 'k4']);
      }));

    void it('delete removes the instruction with its members and pending actions; a new one of that id starts empty', () =>
      withStore(async (store) => {
        await seeded(store, 'r');
        await store.instructions.create('r', instruction('b'));
        await store.instructions.applyMembership('r', [{ instruction: 'b', generation: 1, joined: ['z'], left: [] }], [action('k2', 'b', ['z'])]);
        assert.equal(await store.instructions.delete('r', 'a'), true);
        assert.equal(await store.instructions.delete('r', 'a'), false);
        assert.equal(await store.instructions.get('r', 'a'), null);
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['k2']);
        assert.deepEqual(await store.instructions.members('r', 'b'), ['z']);
        await store.instructions.create('r', instruction('a'));
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        assert.deepEqual((await store.instructions.list('r')).map((i) => i.id), ['b', 'a']);
      }));

    void it('applyMembership adds joined entries, removes left ones and adds the pending actions, per realm', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a'));
        await store.instructions.create('s', instruction('a'));
        await store.instructions.applyMembership(
          'r',
          [{ instruction: 'a', generation: 1, joined: ['o:3', 'o:1', 'p:1|2'], left: [] }],
          [action('k1', 'a', ['o:3', 'o:1', 'p:1|2'])],
        );
        assert.deepEqual((await store.instructions.members('r', 'a')).sort(), ['o:1', 'o:3', 'p:1|2']);
        await store.instructions.applyMembership(
          'r',
          [{ instruction: 'a', generation: 1, joined: ['o:4', 'o:1'], left: ['o:3', 'o:never'] }],
          [action('k2', 'a', ['o:4'], { created: N1 }), action('k3', 'a', ['o:3'], { part: 'until', created: N1 })],
        );
        assert.deepEqual((await store.instructions.members('r', 'a')).sort(), ['o:1', 'o:4', 'p:1|2']);
        assert.deepEqual(await store.instructions.members('s', 'a'), []);
        assert.deepEqual(await store.instructions.pending('s', 10), []);
        assert.deepEqual(await store.instructions.pending('r', 10), [
          action('k1', 'a', ['o:3', 'o:1', 'p:1|2']),
          action('k2', 'a', ['o:4'], { created: N1 }),
          action('k3', 'a', ['o:3'], { part: 'until', created: N1 }),
        ]);
        // Membership without actions (an instruction with no `then`) and actions alone both apply.
        await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: [], left: ['o:4'] }], []);
        assert.deepEqual((await store.instructions.members('r', 'a')).sort(), ['o:1', 'p:1|2']);
        await store.instructions.applyMembership('r', [], []);
        assert.equal((await store.instructions.pending('r', 10)).length, 3);
      }));

    void it('applyMembership skips a change of a stale generation or of a deleted instruction, with its actions, and applies the others', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a', { generation: 3 }));
        await store.instructions.create('r', instruction('b'));
        await store.instructions.applyMembership(
          'r',
          [
            { instruction: 'a', generation: 2, joined: ['x'], left: [] },
            { instruction: 'b', generation: 1, joined: ['y'], left: [] },
            { instruction: 'gone', generation: 1, joined: ['z'], left: [] },
          ],
          [action('ka', 'a', ['x'], { generation: 2 }), action('kb', 'b', ['y']), action('kg', 'gone', ['z'])],
        );
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        assert.deepEqual(await store.instructions.members('r', 'b'), ['y']);
        assert.deepEqual(await store.instructions.members('r', 'gone'), []);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['kb']);
      }));

    void it('applyMembership is idempotent: an entry joined twice is one member, an action key written twice is one action', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a'));
        const batch = [{ instruction: 'a', generation: 1, joined: ['x'], left: [] }];
        await store.instructions.applyMembership('r', batch, [action('k1', 'a', ['x'])]);
        await store.instructions.applyMembership('r', batch, [action('k1', 'a', ['x'])]);
        assert.deepEqual(await store.instructions.members('r', 'a'), ['x']);
        assert.deepEqual(await store.instructions.pending('r', 10), [action('k1', 'a', ['x'])]);
      }));

    void it('pending is oldest first and honours the limit; completePending removes by key; recordAttempt counts; the depth is kept', () =>
      withStore(async (store) => {
        await store.instructions.create('r', instruction('a'));
        await store.instructions.create('r', instruction('b'));
        await store.instructions.applyMembership('r', [], [action('k1', 'b', ['1']), action('k2', 'a', ['2'])]);
        await store.instructions.applyMembership('r', [], [action('k3', 'a', ['3'], { created: N1 })]);
        await store.instructions.applyMembership('r', [], [action('k0', 'b', ['4'], { created: N2, depth: 3 })]);
        assert.deepEqual(keys(await store.instructions.pending('r', 10)), ['k1', 'k2', 'k3', 'k0']);
        assert.deepEqual(keys(await store.instructions.pending('r', 2)), ['k1', 'k2']);
        await store.instructions.recordAttempt('r', 'k2');
        await store.instructions.recordAttempt('r', 'k2');
        await store.instructions.recordAttempt('r', 'missing');
        assert.deepEqual((await store.instructions.pending('r', 10)).map((a) => [a.key, a.attempts]), [
          ['k1', 0],
          ['k2', 2],
          ['k3', 0],
          ['k0', 0],
        ]);
        await store.instructions.completePending('r', ['k1', 'k3', 'missing']);
        await store.instructions.completePending('other', ['k2']);
        await store.instructions.completePending('r', []);
        assert.deepEqual(await store.instructions.pending('r', 10), [action('k2', 'a', ['2'], { attempts: 2 }), action('k0', 'b', ['4'], { created: N2, depth: 3 })]);
      }));

    void it('realmsWithInstructions names the realms holding at least one instruction', () =>
      withStore(async (store) => {
        assert.deepEqual(await store.instructions.realmsWithInstructions(), []);
        await store.instructions.create('t1/b', instruction('a'));
        await store.instructions.create('a', instruction('a'));
        await store.instructions.create('a', instruction('b'));
        await store.instructions.create('c', instruction('a'));
        assert.deepEqual((await store.instructions.realmsWithInstructions()).sort(), ['a', 'c', 't1/b']);
        await store.instructions.delete('c', 'a');
        await store.instructions.delete('a', 'a');
        assert.deepEqual((await store.instructions.realmsWithInstructions()).sort(), ['a', 't1/b']);
      }));

    void it('deleting a realm removes its instructions, members, pending actions and evaluation lease; other realms keep theirs', () =>
      withStore(async (store) => {
        await seeded(store, 'doomed');
        await seeded(store, 'kept');
        await store.leases.acquire('instructions:doomed', 'p1', 60_000, N0);
        await store.leases.acquire('instructions:kept', 'p1', 60_000, N0);
        assert.equal(await store.realms.delete('doomed'), true);
        assert.deepEqual(await store.instructions.list('doomed'), []);
        assert.equal(await store.instructions.count('doomed'), 0);
        assert.deepEqual(await store.instructions.members('doomed', 'a'), []);
        assert.deepEqual(await store.instructions.pending('doomed', 10), []);
        assert.deepEqual(await store.instructions.realmsWithInstructions(), ['kept']);
        // A batch the engine decided before the delete finds no instruction: nothing is written.
        await store.instructions.applyMembership('doomed', [{ instruction: 'a', generation: 1, joined: ['late'], left: [] }], [action('k9', 'a', ['late'])]);
        assert.deepEqual(await store.instructions.members('doomed', 'a'), []);
        assert.deepEqual(await store.instructions.pending('doomed', 10), []);
        // The lease is free again: another process takes it at once.
        assert.equal((await store.leases.acquire('instructions:doomed', 'p2', 60_000, N1)).holder, 'p2');
        assert.equal((await store.leases.acquire('instructions:kept', 'p2', 60_000, N1)).holder, 'p1');
        assert.deepEqual((await store.instructions.members('kept', 'a')).sort(), ['x', 'y']);
        assert.deepEqual(keys(await store.instructions.pending('kept', 10)), ['k1']);
        // A realm of that name, put again, starts without instructions.
        await seeded(store, 'doomed');
        assert.deepEqual((await store.instructions.list('doomed')).map((i) => i.id), ['a']);
      }));
  });

  void describe('leases', () => {
    const T = (seconds: number): string => new Date(Date.parse(N0) + seconds * 1000).toISOString();

    void it('a free lease is taken; its holder renews it; another is refused and told who holds it until when', () =>
      withStore(async (store) => {
        assert.deepEqual(await store.leases.acquire('l', 'p1', 10_000, T(0)), { name: 'l', holder: 'p1', expires: T(10) });
        assert.deepEqual(await store.leases.acquire('l', 'p1', 10_000, T(5)), { name: 'l', holder: 'p1', expires: T(15) });
        assert.deepEqual(await store.leases.acquire('l', 'p2', 10_000, T(14)), { name: 'l', holder: 'p1', expires: T(15) });
        // Leases are independent by name.
        assert.deepEqual(await store.leases.acquire('m', 'p2', 1_000, T(14)), { name: 'm', holder: 'p2', expires: T(15) });
      }));

    void it('an expired lease is taken over; the old holder is then refused', () =>
      withStore(async (store) => {
        await store.leases.acquire('l', 'p1', 10_000, T(0));
        assert.deepEqual(await store.leases.acquire('l', 'p2', 10_000, T(10)), { name: 'l', holder: 'p2', expires: T(20) });
        assert.deepEqual(await store.leases.acquire('l', 'p1', 10_000, T(11)), { name: 'l', holder: 'p2', expires: T(20) });
      }));

    void it('release frees the lease for another at once, and only its holder can release it', () =>
      withStore(async (store) => {
        await store.leases.acquire('l', 'p1', 60_000, T(0));
        await store.leases.release('l', 'p2');
        assert.equal((await store.leases.acquire('l', 'p2', 60_000, T(1))).holder, 'p1');
        await store.leases.release('l', 'p1');
        await store.leases.release('l', 'p1');
        await store.leases.release('never', 'p1');
        assert.deepEqual(await store.leases.acquire('l', 'p2', 60_000, T(2)), { name: 'l', holder: 'p2', expires: T(62) });
      }));

    void it('of concurrent acquires of a free or expired lease exactly one wins, and all are told the same holder', () =>
      withStore(async (store) => {
        const holders = Array.from({ length: 8 }, (_, i) => `p${i}`);
        const free = await Promise.all(holders.map((holder) => store.leases.acquire('free', holder, 10_000, T(0))));
        const first = new Set(free.map((lease) => lease.holder));
        assert.equal(first.size, 1, `one holder, got ${[...first].join(', ')}`);
        assert.ok(holders.includes([...first][0] as string));
        // Expired: everybody races to take it over.
        await store.leases.acquire('taken', 'old', 1_000, T(0));
        const results = await Promise.all(holders.map((holder) => store.leases.acquire('taken', holder, 10_000, T(5))));
        const winners = new Set(results.map((lease) => lease.holder));
        assert.equal(winners.size, 1);
        assert.ok(!winners.has('old'));
      }));
  });
}
