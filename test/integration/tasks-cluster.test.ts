/**
 * Task pushes across processes: two API servers on one SQLite file and a real nats-server.
 * A task subscription on one process hears the task writes made on the other (v1 and REST),
 * as `cre`/`upd`/`del`, and an `exe` subscription there sees tasks created on the first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { assertSuc, connectWire, signToken, testSecret, uniqueId, type HivekitWire } from '../support/hivekit-wire.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

describe('tasks in a cluster: pushes reach every process', { timeout: 60_000 }, () => {
  let nats: NatsServer;
  let a: Harness;
  let b: Harness;
  let token: string;
  let writeToken: string;
  const realm = 'depot';
  const wires: HivekitWire[] = [];

  before(async () => {
    nats = await startNatsServer();
    a = await startHarness({ bus: nats.url, jwtSecret: testSecret });
    b = await startHarness({ bus: nats.url, jwtSecret: testSecret, store: `sqlite:${a.dbPath}` });
    writeToken = (await makeRealm(a.url, realm)).write;
    token = await signToken({ sub: 'cluster-tasks' });
  });
  after(async () => {
    await Promise.all(wires.map((w) => w.close()));
    await b.stop();
    await a.stop();
    await nats.stop();
  });

  it('a subscription on A hears creates, updates and deletes made on B', async () => {
    const onA = await connectWire(a.url, token);
    const onB = await connectWire(b.url, token);
    wires.push(onA, onB);
    const sid = uniqueId('task-subscription');
    const pushes = onA.watch(sid);
    assertSuc(await onA.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk', sty: 'rea' } }));
    const id = uniqueId('job');
    assertSuc(await onB.request({ typ: 'tsk', act: 'cre', id, rea: realm, tid: 'van', lab: 'on B' }));
    const [created] = await pushes.atLeast(1, 3000);
    assert.deepEqual(Object.keys(created.tsk.cre as object), [id]);
    assert.equal(created.tsk.cre[id].lab, 'on B');
    const patched = await call(b.url, 'PATCH', `/v2/realm/${realm}/task/${id}`, { token: writeToken, body: { status: '$hkt_completed' } });
    assert.equal(patched.status, 200, patched.text);
    const [, updated] = await pushes.atLeast(2, 3000);
    assert.equal(updated.tsk.upd[id].sts, '$hkt_completed');
    assertSuc(await onB.request({ typ: 'tsk', act: 'del', id, rea: realm }));
    const [, , deleted] = await pushes.atLeast(3, 3000);
    assert.deepEqual(Object.keys(deleted.tsk as object), ['del']);
    assert.equal(deleted.tsk.del[id].sts, '$hkt_completed');
  });

  it('an exe subscription on B gets the tasks created on A, in creation order', async () => {
    const onA = await connectWire(a.url, token);
    const onB = await connectWire(b.url, token);
    wires.push(onA, onB);
    const [first, second] = [uniqueId('z-first'), uniqueId('a-second')];
    assertSuc(await onA.request({ typ: 'tsk', act: 'cre', id: first, rea: realm, tid: 'van' }));
    assertSuc(await onA.request({ typ: 'tsk', act: 'cre', id: second, rea: realm, loc: { lat: 1, lon: 2 } }));
    const sid = uniqueId('task-subscription');
    const pushes = onB.watch(sid);
    assertSuc(await onB.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk', exe: true } }));
    const [full] = await pushes.exactly(1, 300);
    assert.equal(full.uty, 'ful');
    assert.deepEqual(Object.keys(full.tsk.cre as object), [first, second]);
  });
});
