/**
 * The instruction runtime over the real SQLite store and services (test/support/
 * instruction-process.ts): `then`/`until` on data changes, `within` pairs, an area coloured while
 * a scooter is in it (Hivekit's tutorial), `delete()`, the depth limit stopping a chain that
 * triggers itself, `every` ticks, suspension, a restart on the same file that neither fires
 * `then` again nor loses an `until`, and a lease takeover between two processes on one file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultTenant } from '../../internal/auth/principal.js';
import type { Lease } from '../../internal/domain/instruction.js';
import type { Realm } from '../../internal/domain/types.js';
import type { LeaseStore } from '../../internal/store/port.js';
import { startInstructionProcess, waitFor, type InstructionProcess } from '../support/instruction-process.js';

const at = (longitude: number, latitude: number): { longitude: number; latitude: number } => ({ longitude, latitude });

/** A local receiver of sendToUrl POSTs. */
interface Receiver {
  url: string;
  posts: { path: string; key: string; body: unknown }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const posts: Receiver['posts'] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', key: String(req.headers['idempotency-key']), body: JSON.parse(text) as unknown });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const idsOf = (body: unknown): string[] => (body as { id: string }[]).map((entry) => entry.id).sort();

describe('instruction runtime (SQLite, one process)', () => {
  let dir: string;
  let proc: InstructionProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'locus-ins-'));
    proc = await startInstructionProcess(join(dir, 'locus.db'), { processId: 'p1', config: { instructionMaxDepth: 4 } });
  });
  after(async () => {
    await proc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('then runs once per entry that joins, until once per entry that leaves; the writes carry their origin', async () => {
    const realm = await proc.realm('charging');
    const { objects } = proc.services;
    await objects.upsert(realm, 's1', { location: at(1, 1), data: { type: 'scooter', charge: 50 } });
    await proc.instruct(realm, 'charge', 'when object(type="scooter", charge<10) then set("needsCharging", "true") until set("needsCharging", "false")');
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 's1'))?.data.needsCharging, undefined);
    await objects.upsert(realm, 's1', { data: { charge: 5 } });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 's1'))?.data.needsCharging, 'true');
    // Staying in the set fires nothing more.
    const writes = proc.changes.filter((c) => c.change.origin?.instruction === 'charge').length;
    await objects.upsert(realm, 's1', { data: { charge: 4 } });
    await proc.settle(realm);
    assert.equal(proc.changes.filter((c) => c.change.origin?.instruction === 'charge').length, writes);
    await objects.upsert(realm, 's1', { data: { charge: 80 } });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 's1'))?.data.needsCharging, 'false');
    const origins = proc.changes.filter((c) => c.change.origin?.instruction === 'charge').map((c) => [c.change.id, c.change.origin?.depth]);
    assert.deepEqual(origins, [
      ['s1', 1],
      ['s1', 1],
    ]);
    assert.deepEqual(await proc.store.instructions.members(realm.id, 'charge'), []);
    assert.deepEqual(await proc.store.instructions.pending(realm.id, 10), []);
  });

  it('creating an instruction evaluates it over the realm: every current match joins (delete())', async () => {
    const realm = await proc.realm('cleanup');
    const { objects } = proc.services;
    await objects.upsert(realm, 'bad', { data: { troublemaker: 'true' } });
    await objects.upsert(realm, 'good', { data: { troublemaker: 'false' } });
    await proc.instruct(realm, 'troublemakers', 'when\n  object(troublemaker="true")\nthen\n  delete()');
    await proc.settle(realm);
    assert.equal(await proc.object(realm, 'bad'), null);
    assert.notEqual(await proc.object(realm, 'good'), null);
    // And whenever one becomes so later; its deletion makes it leave the set.
    await objects.upsert(realm, 'good', { data: { troublemaker: 'true' } });
    await proc.settle(realm);
    assert.equal(await proc.object(realm, 'good'), null);
    assert.deepEqual(await proc.store.instructions.members(realm.id, 'troublemakers'), []);
  });

  it('a new source starts from an empty set (then for every current match); a new label or data changes nothing', async () => {
    const realm = await proc.realm('renewed');
    const { objects, instructions } = proc.services;
    await objects.upsert(realm, 'o1', { data: { kind: 'box' } });
    await proc.instruct(realm, 'count', 'when object(kind="box") then set("v", 1)');
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'o1'))?.data.v, 1);
    const fired = (): number => proc.changes.filter((c) => c.change.origin?.instruction === 'count').length;
    await instructions.update(realm, 'count', { label: 'renamed', data: { note: 'x' } });
    await proc.settle(realm);
    assert.equal(fired(), 1);
    await instructions.update(realm, 'count', { instruction: 'when object(kind="box") then set("v", 2)' });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'o1'))?.data.v, 2);
    assert.equal(fired(), 2);
    assert.deepEqual(await proc.store.instructions.members(realm.id, 'count'), ['o:o1']);
  });

  it('within pairs: set acts on both objects of a pair as it forms and as it breaks', async () => {
    const realm = await proc.realm('pairs');
    const { objects } = proc.services;
    await objects.upsert(realm, 'b1', { location: at(10, 50), data: { type: 'bicycle' } });
    await objects.upsert(realm, 'c1', { location: at(10.01, 50), data: { type: 'car' } });
    await proc.instruct(realm, 'near', 'when object(type="bicycle").within(10, type="car") then set("near", "yes") until set("near", "no")');
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'b1'))?.data.near, undefined);
    // About 3.6 m east of the bicycle.
    await objects.upsert(realm, 'c1', { location: at(10.00005, 50) });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'b1'))?.data.near, 'yes');
    assert.equal((await proc.object(realm, 'c1'))?.data.near, 'yes');
    assert.deepEqual(await proc.store.instructions.members(realm.id, 'near'), ['p:["b1","c1"]']);
    await objects.upsert(realm, 'b1', { location: at(10.001, 50) });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'b1'))?.data.near, 'no');
    assert.equal((await proc.object(realm, 'c1'))?.data.near, 'no');
  });

  it('an area turns $hkt_color #62ec46 while a scooter is in it (Hivekit\'s tutorial)', async () => {
    const realm = await proc.realm('tutorial');
    const { objects, areas } = proc.services;
    const square = { points: [at(0, 0), at(0, 1), at(1, 1), at(1, 0)].map((p) => [p.longitude, p.latitude]) };
    await areas.create(realm, 'district', { label: 'District', shape: square, data: { $hkt_color: '#c546ec' } });
    await objects.upsert(realm, 'sc', { location: at(2, 2), data: { type: 'scooter' } });
    await proc.instruct(realm, 'colour', 'when\n    area().containing(type=scooter)\nthen\n    set($hkt_color, \\#62ec46)\nuntil\n    set($hkt_color, \\#c546ec)');
    await proc.settle(realm);
    assert.equal((await proc.store.areas.get(realm.id, 'district'))?.data.$hkt_color, '#c546ec');
    await objects.upsert(realm, 'sc', { location: at(0.5, 0.5) });
    await proc.settle(realm);
    assert.equal((await proc.store.areas.get(realm.id, 'district'))?.data.$hkt_color, '#62ec46');
    const areaWrite = proc.changes.find((c) => c.kind === 'area' && c.change.origin?.instruction === 'colour');
    assert.deepEqual(areaWrite?.change.origin, { instruction: 'colour', depth: 1 });
    await objects.upsert(realm, 'sc', { location: at(3, 3) });
    await proc.settle(realm);
    assert.equal((await proc.store.areas.get(realm.id, 'district'))?.data.$hkt_color, '#c546ec');
  });

  it('a chain of instructions that triggers itself stops at the depth limit and logs a warn once', async () => {
    const realm = await proc.realm('loop');
    const { objects } = proc.services;
    await proc.instruct(realm, 'a-to-b', 'when object(flag="a") then set("flag", "b")');
    await proc.instruct(realm, 'b-to-a', 'when object(flag="b") then set("flag", "a")');
    await proc.settle(realm);
    await objects.upsert(realm, 'x', { data: { flag: 'a' } });
    await proc.settle(realm);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await proc.settle(realm);
    const chain = proc.changes.filter((c) => c.change.id === 'x' && c.change.realm === realm.id).map((c) => c.change.origin?.depth ?? 0);
    // The client's write, then one write per depth up to the limit (4), then nothing.
    assert.deepEqual(chain, [0, 1, 2, 3, 4]);
    assert.equal((await proc.object(realm, 'x'))?.data.flag, 'a');
    const warns = proc.logs.filter((entry) => entry.lvl === 'warn');
    assert.equal(warns.length, 1, JSON.stringify(proc.logs));
    assert.equal(warns[0]?.id, 'b-to-a');
    assert.match(warns[0]?.msg ?? '', /depth limit \(4/);
    // The holder keeps the realm's log history without any subscriber (a later `log` subscription with `exe` gets it).
    assert.deepEqual(
      proc.delivery.log.recent(realm.id).filter((entry) => entry.lvl === 'warn').map((entry) => entry.id),
      ['b-to-a'],
    );
    // The sets follow the data all the same: a repair finds nothing to fire.
    assert.deepEqual(await proc.store.instructions.members(realm.id, 'a-to-b'), ['o:x']);
    await (await proc.engine(realm)).repair();
    await proc.settle(realm);
    assert.equal(proc.changes.filter((c) => c.change.id === 'x' && c.change.realm === realm.id).length, 5);
  });

  it('every: evaluated on changes and, on top, over the realm at ticks aligned to the period', async () => {
    const realm = await proc.realm('ticks');
    const { objects } = proc.services;
    await proc.instruct(realm, 'tick', 'every 1 s\nwhen object(type="beacon") then set("seen", "yes")');
    await proc.settle(realm);
    await objects.upsert(realm, 'b', { data: { type: 'beacon' } });
    await proc.settle(realm);
    assert.equal((await proc.object(realm, 'b'))?.data.seen, 'yes');
    const ticks = async (): Promise<number> => {
      const line = /locus_instruction_evaluations_total\{trigger="tick",realm="ticks"\} (\d+)/.exec(await proc.metrics.scrape());
      return Number(line?.[1] ?? 0);
    };
    const before = await ticks();
    await waitFor('a tick', async () => (await ticks()) > before, 2500);
    const at = Date.now() % 1000;
    assert.ok(at < 300, `ticked ${at} ms past the second`);
    // Nothing changed between the evaluations: the tick fired nothing.
    assert.equal(proc.changes.filter((c) => c.change.origin?.instruction === 'tick').length, 1);
  });

  it('a deleted realm stops being evaluated at once and its lease is given back', async () => {
    const realm = await proc.realm('doomed');
    await proc.instruct(realm, 'mark', 'when object(type="crate") then set("seen", "yes")');
    await proc.settle(realm);
    await proc.services.realms.delete(defaultTenant, 'doomed');
    await waitFor('the realm let go', () => !proc.runtime.heldRealms().includes('doomed'));
    const lease = await proc.store.leases.acquire('instructions:doomed', 'someone-else', 1000, new Date().toISOString());
    assert.equal(lease.holder, 'someone-else');
  });

  it('an instruction whose actions keep failing is suspended: its record says why, a log event tells, it runs no more', async () => {
    const realm = await proc.realm('failing');
    const { objects } = proc.services;
    // Loopback without LOCUS_SEND_TO_URL_ALLOW: every delivery is refused.
    await proc.instruct(realm, 'hook', 'when object(type="truck") then sendToUrl("http://127.0.0.1:9/hook")');
    await proc.settle(realm);
    for (let k = 0; k < 5; k++) {
      await objects.upsert(realm, `t${k}`, { data: { type: 'truck' } });
      await proc.settle(realm);
    }
    const record = await waitFor('the suspension', async () => {
      const r = await proc.store.instructions.get(realm.id, 'hook');
      return r?.suspended === null ? null : r;
    });
    assert.match(record.suspended ?? '', /5 failures in a row/);
    assert.ok(proc.logs.some((entry) => entry.id === 'hook' && entry.lvl === 'error' && entry.msg.startsWith('suspended:')));
    const engine = await proc.engine(realm);
    assert.equal(engine.entriesOf('hook'), null);
    assert.match(await proc.metrics.scrape(), /locus_instructions_suspended\{realm="failing"\} 1/);
    // Suspended: new matches are not evaluated, and nothing more is queued.
    await objects.upsert(realm, 't9', { data: { type: 'truck' } });
    await proc.settle(realm);
    assert.deepEqual(await proc.store.instructions.pending(realm.id, 10), []);
    assert.equal((await proc.store.instructions.members(realm.id, 'hook')).includes('o:t9'), false);
  });
});

describe('instruction runtime across a restart (same SQLite file)', () => {
  it('neither fires then again for entries already in the set nor loses an until; sendToUrl carries the idempotency key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-ins-'));
    const dbPath = join(dir, 'locus.db');
    const receiver = await startReceiver();
    const allow = { sendToUrlAllow: ['127.0.0.1'] };
    try {
      let proc = await startInstructionProcess(dbPath, { processId: 'first', config: allow });
      let realm: Realm = await proc.realm('restart');
      await proc.services.objects.upsert(realm, 's1', { data: { type: 'scooter' } });
      await proc.instruct(realm, 'watch', `when object(type="scooter") then sendToUrl("${receiver.url}/then") until sendToUrl("${receiver.url}/until")`);
      await proc.settle(realm);
      await waitFor('the first then', () => receiver.posts.length === 1);
      assert.deepEqual(idsOf(receiver.posts[0]?.body), ['s1']);
      assert.match(receiver.posts[0]?.key ?? '', /^watch:1:then:/);
      await proc.close();

      // While no process evaluates the realm: s1 leaves the set, s2 joins it.
      const quiet = await startInstructionProcess(dbPath, { processId: 'writer', config: allow, runtime: false });
      realm = await quiet.realm('restart');
      await quiet.services.objects.upsert(realm, 's1', { data: { type: 'car' } });
      await quiet.services.objects.upsert(realm, 's2', { data: { type: 'scooter' } });
      await quiet.close();

      proc = await startInstructionProcess(dbPath, { processId: 'second', config: allow });
      realm = await proc.realm('restart');
      await proc.settle(realm);
      await waitFor('the repair after the restart', () => receiver.posts.length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const byPath = receiver.posts.slice(1).map((post) => [post.path, idsOf(post.body)]);
      assert.deepEqual(byPath.sort(), [
        ['/then', ['s2']],
        ['/until', ['s1']],
      ]);
      assert.deepEqual(await proc.store.instructions.members(realm.id, 'watch'), ['o:s2']);
      await proc.close();
    } finally {
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a pending action left by a process that died is carried out by the next one, with the same idempotency key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-ins-'));
    const dbPath = join(dir, 'locus.db');
    const receiver = await startReceiver();
    const allow = { sendToUrlAllow: ['127.0.0.1'] };
    try {
      const proc = await startInstructionProcess(dbPath, { processId: 'only', config: allow });
      const realm = await proc.realm('outbox');
      await proc.instruct(realm, 'hook', `when object(type="van") then sendToUrl("${receiver.url}/then")`);
      await proc.settle(realm);
      await proc.close();
      // What a holder that died after the state write and before the action leaves behind.
      const again = await startInstructionProcess(dbPath, { processId: 'setup', config: allow, runtime: false });
      const realmAgain = await again.realm('outbox');
      await again.services.objects.upsert(realmAgain, 'v1', { data: { type: 'van' } });
      await again.store.instructions.applyMembership(realmAgain.id, [{ instruction: 'hook', generation: 1, joined: ['o:v1'], left: [] }], [
        { key: 'hook:1:then:dead.1', instruction: 'hook', generation: 1, part: 'then', entries: ['o:v1'], created: new Date().toISOString(), attempts: 0, depth: 1 },
      ]);
      await again.close();

      const next = await startInstructionProcess(dbPath, { processId: 'next', config: allow });
      const realmNext = await next.realm('outbox');
      await next.settle(realmNext);
      await waitFor('the leftover action', () => receiver.posts.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Carried out once, with the key the dead holder chose; the repair finds v1 already in the set.
      assert.deepEqual(receiver.posts.map((post) => [post.path, post.key, idsOf(post.body)]), [['/then', 'hook:1:then:dead.1', ['v1']]]);
      await waitFor('the outbox emptied', async () => (await next.store.instructions.pending(realmNext.id, 10)).length === 0);
      await next.close();
    } finally {
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A lease store this test can cut a process off from. */
class Severable implements LeaseStore {
  cut = false;
  constructor(private readonly inner: LeaseStore) {}
  acquire(name: string, holder: string, ttlMs: number, now: string): Promise<Lease> {
    return this.cut ? Promise.reject(new Error('store unreachable')) : this.inner.acquire(name, holder, ttlMs, now);
  }
  release(name: string, holder: string): Promise<void> {
    return this.cut ? Promise.reject(new Error('store unreachable')) : this.inner.release(name, holder);
  }
}

describe('instruction leases between two processes on one store', () => {
  it('one evaluates the realm; when it loses the store, it stops and the other takes over within the lease time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-ins-'));
    const dbPath = join(dir, 'locus.db');
    let severable: Severable | null = null;
    const one = await startInstructionProcess(dbPath, {
      processId: 'one',
      leases: (leases) => (severable = new Severable(leases)),
    });
    const two = await startInstructionProcess(dbPath, { processId: 'two' });
    try {
      const realm = await one.realm('shared');
      await one.instruct(realm, 'mark', 'when object(type="parcel") then set("marked", "yes")');
      await one.settle(realm);
      await two.runtime.leaseRound();
      assert.deepEqual(one.runtime.heldRealms(), ['shared']);
      assert.deepEqual(two.runtime.heldRealms(), []);
      assert.match(await one.metrics.scrape(), /locus_instruction_lease_held\{realm="shared"\} 1/);

      (severable as unknown as Severable).cut = true;
      const cutAt = Date.now();
      await waitFor('one to stop', () => one.runtime.heldRealms().length === 0, 3000);
      await waitFor('two to take over', () => two.runtime.heldRealms().includes('shared'), 3000);
      const tookMs = Date.now() - cutAt;
      assert.ok(tookMs <= 1000 + 2 * 200 + 300, `took over after ${tookMs} ms`);
      assert.doesNotMatch(await one.metrics.scrape(), /locus_instruction_lease_held\{realm="shared"\}/);

      // The new holder evaluates: a write it stores fires the instruction.
      const realmTwo = await two.realm('shared');
      await two.services.objects.upsert(realmTwo, 'p1', { data: { type: 'parcel' } });
      await two.settle(realmTwo);
      assert.equal((await two.object(realmTwo, 'p1'))?.data.marked, 'yes');

      // One reaches the store again: the lease is two's, so one stays out.
      (severable as unknown as Severable).cut = false;
      await one.runtime.leaseRound();
      assert.deepEqual(one.runtime.heldRealms(), []);
    } finally {
      await one.close().catch(() => undefined);
      await two.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
