/**
 * Conformance (hivekit-compat.md 4.10, 5.3): tasks over the v1 wire. The first block follows
 * the official client's test/task-test.js step by step over WebSocket, reading replies and
 * pushes the way the client's task handler and subscription do (their field renaming is
 * modelled below: a read renames the steps' keys too, a push only the record's own); the same
 * calls then run over HTTP (/api/v1). Then: bad input refused with 400 and nothing stored,
 * the 409 and 404 texts, subscriptions with and without `exe`, cre/upd/del pushes from writes
 * of another connection, rights (`per`), and objects keeping their `tds`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  connectWire,
  createRealm,
  httpRequest,
  newCid,
  signToken,
  sleep,
  uniqueId,
  zeroLoc,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

/** The client's long names of the short keys (src/fields.js FIELD and LOCATION). */
const FIELD: Record<string, string> = { id: 'id', lab: 'label', dat: 'data', loc: 'location', sts: 'status', stp: 'steps', dsc: 'description', tid: 'targetId', cst: 'connectionStatus', tds: 'taskIds' };
const LOCATION: Record<string, string> = { gcs: 'coordinateSystem', lon: 'longitude', lat: 'latitude', acc: 'accuracy', spe: 'speed', hea: 'heading', alt: 'altitude', alc: 'altitudeAccuracy', tim: 'time' };

/** The client's _extendFields: known short keys renamed (loc's keys too), unknown keys kept as they are. */
function extendFields(record: Json, names: Record<string, string> = FIELD): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(record as Record<string, unknown>)) {
    const long = names[key];
    if (long === undefined) out[key] = value;
    else out[long] = key === 'loc' ? extendFields(value, LOCATION) : value;
  }
  return out;
}

/** What realm.task.get resolves with: the record extended, and each step extended too. */
function asRead(dat: Json): Json {
  const task = extendFields(dat);
  if (task.steps !== undefined) task.steps = (task.steps as Json[]).map((step): Json => extendFields(step));
  return task;
}

/** What one subscription push gives the client's `update` listener (subscription.js): the set and the three maps. */
function applyTaskPush(set: Map<string, Json>, push: Json): { data: Record<string, Json>; changes: { added: Json; updated: Json; removed: Json } } {
  assert.ok(push.tsk !== undefined, `not a task push: ${JSON.stringify(push)}`);
  const extendMap = (map: Json): Json => Object.fromEntries(Object.entries((map ?? {}) as Record<string, Json>).map(([id, rec]) => [id, extendFields(rec)]));
  const added = extendMap(push.tsk.cre);
  const updated = extendMap(push.tsk.upd);
  if (push.uty === 'ful') set.clear();
  for (const [id, rec] of Object.entries(added as Record<string, Json>)) set.set(id, rec);
  for (const [id, rec] of Object.entries(updated as Record<string, Json>)) set.set(id, rec);
  for (const id of Object.keys((push.tsk.del ?? {}) as Record<string, Json>)) set.delete(id);
  return { data: Object.fromEntries(set), changes: { added, updated, removed: push.tsk.del } };
}

/** The client's create checks (task-handler.js), so that the literal steps send what it would send. */
function createMessage(id: string, realm: string, options: { label?: string; description?: string; status?: string; location?: Json; targetId?: string; steps?: Json[]; data?: Json }): Msg {
  const m: Msg = { typ: 'tsk', act: 'cre', id, rea: realm };
  if (options.label) m.lab = options.label;
  if (options.data) m.dat = options.data;
  if (options.status) m.sts = options.status;
  if (options.location) m.loc = { lat: options.location.latitude, lon: options.location.longitude };
  if (options.steps) m.stp = options.steps.map((step: Json) => ({ dat: step.data, lab: step.label, sts: step.status }));
  if (options.targetId) m.tid = options.targetId;
  if (options.description) m.dsc = options.description;
  return m;
}

describe('conformance: tasks (compat 4.10), the client suite test/task-test.js', () => {
  const c = conformanceSuite('tasks');
  let realm: string;
  const taskA = uniqueId('task-a');
  const taskB = uniqueId('task-b');
  const taskC = uniqueId('task-c');
  const targetA = uniqueId('target-a');
  const subA = uniqueId('task-subscription');
  const subB = uniqueId('task-subscription');
  const setA = new Map<string, Json>();
  const setB = new Map<string, Json>();
  let seenA = 0;

  /** The next push of subscription A, as the client's listener sees it. */
  async function nextUpdateA(): Promise<ReturnType<typeof applyTaskPush>> {
    await c.wire.until(() => c.wire.pushesOf(subA).length > seenA, 2000, 'the next push of subscription A');
    const push = c.wire.pushesOf(subA)[seenA++];
    return applyTaskPush(setA, push);
  }
  const get = async (id: string): Promise<Json> => {
    const reply = await c.req({ typ: 'tsk', act: 'rea', id, rea: realm });
    assertSuc(reply);
    return asRead(reply.dat);
  };
  const list = async (): Promise<Json> => {
    const reply = await c.req({ typ: 'tsk', act: 'lis', rea: realm });
    assertSuc(reply);
    return reply.dat;
  };

  it('creates realm A and subscribes to all tasks of it (no exe: no push)', async () => {
    realm = uniqueId('realm-a');
    await createRealm(c.url, c.token, realm, { lab: 'label for realm a', dat: { some: 'value' } });
    const pushes = c.wire.watch(subA);
    assertSuc(await c.req({ typ: 'sub', act: 'cre', id: subA, rea: realm, dat: { typ: 'tsk', sty: 'rea' } }));
    await pushes.exactly(0, 200);
  });

  it('creates task A with just a label and target id and retrieves it', async () => {
    c.wire.sendRaw([{ ...createMessage(taskA, realm, { label: 'label for task a', targetId: targetA }), cid: newCid() }]);
    const update = await nextUpdateA();
    assert.ok(update.changes.added[taskA]);
    assert.equal(update.changes.added[taskA].label, 'label for task a');
    assert.equal(update.changes.added[taskA].location.longitude, 0);
    assert.equal(update.changes.added[taskA].status, '$hkt_not_started');

    const task = await get(taskA);
    assert.equal(task.label, 'label for task a');
    assert.equal(task.location.longitude, 0);
    assert.equal(task.status, '$hkt_not_started');
    assert.equal(task.targetId, targetA);
  });

  it('creates task B with a label, description, location and steps', async () => {
    c.wire.sendRaw([
      {
        ...createMessage(taskB, realm, {
          label: 'label for task b',
          description: 'description for task b',
          status: '$hkt_blocked',
          location: { latitude: 1, longitude: 2 },
          steps: [
            { data: { weight: 1 }, label: 'step 1', status: '$hkt_not_started' },
            { data: { weight: 2 }, label: 'step 2', status: '$hkt_completed' },
          ],
        }),
        cid: newCid(),
      },
    ]);
    const update = await nextUpdateA();
    assert.ok(update.data[taskB]);
    assert.equal(update.data[taskB].steps[0].status, '$hkt_not_started');

    const task = await get(taskB);
    assert.equal(task.label, 'label for task b');
    assert.equal(task.description, 'description for task b');
    assert.equal(task.status, '$hkt_blocked');
    assert.equal(task.location.latitude, 1);
    assert.equal(task.location.longitude, 2);
    assert.equal(task.steps[0].label, 'step 1');
    assert.equal(task.steps[0].status, '$hkt_not_started');
    assert.equal(task.steps[0].data.weight, 1);
    assert.equal(task.steps[1].label, 'step 2');
    assert.equal(task.steps[1].status, '$hkt_completed');
    assert.equal(task.steps[1].data.weight, 2);
  });

  it('task C with a targetId and a location, an invalid status, or neither target is refused by the server too, and nothing is stored', async () => {
    const both = await c.req({ typ: 'tsk', act: 'cre', id: taskC, rea: realm, lab: 'label for task c', loc: { lat: 1, lon: 2 }, tid: targetA });
    assertError(both, 'a task has either a target object id (tid) or a location (loc), not both: give only one of them', 400, { typ: 'tsk', act: 'cre' });
    const status = await c.req({ typ: 'tsk', act: 'cre', id: taskC, rea: realm, lab: 'label for task c', tid: targetA, sts: 'doesnotexist' });
    assertError(status, /^sts must be one of "\$hkt_not_started", "\$hkt_in_progress", "\$hkt_completed", "\$hkt_failed", "\$hkt_canceled", "\$hkt_paused", "\$hkt_blocked" \(got the string "doesnotexist"\)$/, 400);
    const neither = await c.req({ typ: 'tsk', act: 'cre', id: taskC, rea: realm, lab: 'label for task c' });
    assertError(neither, 'a task needs either a target object id (tid) or a location (loc): give one of them', 400);
    assertError(await c.req({ typ: 'tsk', act: 'rea', id: taskC, rea: realm }), `unknown task ${taskC}`, 404);
  });

  it('lists tasks without options: in creation order', async () => {
    const tasks = await list();
    assert.deepEqual(Object.keys(tasks), [taskA, taskB]);
    assert.equal(extendFields(tasks[taskA]).label, 'label for task a');
    assert.equal(extendFields(tasks[taskB]).label, 'label for task b');
  });

  it('updates the label for task A', async () => {
    assertSuc(await c.req({ typ: 'tsk', act: 'upd', id: taskA, rea: realm, lab: 'new label for task a' }));
    assert.equal((await get(taskA)).label, 'new label for task a');
    const update = await nextUpdateA();
    assert.equal(update.changes.updated[taskA].label, 'new label for task a');
  });

  it('creates a second subscription with execute immediately: one full push with A and B, after the reply', async () => {
    const pushes = c.wire.watch(subB);
    const cid = newCid();
    const [reply] = await c.wire.batch([{ typ: 'sub', act: 'cre', id: subB, rea: realm, dat: { typ: 'tsk', sty: 'rea', exe: true }, cid }]);
    assertSuc(reply);
    const [push] = await pushes.exactly(1, 300);
    const update = applyTaskPush(setB, push);
    assert.equal(push.uty, 'ful');
    assert.ok(update.data[taskA]);
    assert.ok(update.data[taskB]);
    assert.deepEqual(Object.keys(push.tsk), ['cre']);
    assert.ok((c.wire.pushRecords(subB)[0]?.frame ?? 0) > (c.wire.replyOf(cid)?.frame ?? Infinity), 'the exe push comes after the reply (compat 5.4)');
  });

  it('completes step 1 of task B', async () => {
    assertSuc(
      await c.req({
        typ: 'tsk',
        act: 'upd',
        id: taskB,
        rea: realm,
        stp: [
          { dat: { weight: 1 }, lab: 'step 1', sts: '$hkt_completed' },
          { dat: { weight: 2 }, lab: 'step 2', sts: '$hkt_completed' },
        ],
      }),
    );
    const task = await get(taskB);
    assert.equal(task.steps[0].status, '$hkt_completed');
    assert.equal(task.steps[1].status, '$hkt_completed');
    assert.equal(task.label, 'label for task b', 'an upd without lab keeps the label');
    const update = await nextUpdateA();
    assert.equal(update.changes.updated[taskB].steps[0].status, '$hkt_completed');
  });

  it('deletes task 1: the list holds only B, and both subscriptions push its removal keyed by id', async () => {
    const pushesB = c.wire.watch(subB);
    assertSuc(await c.req({ typ: 'tsk', act: 'del', id: taskA, rea: realm }));
    assert.deepEqual(Object.keys(await list()), [taskB]);
    const update = await nextUpdateA();
    assert.deepEqual(Object.keys(update.changes.removed as object), [taskA]);
    assert.deepEqual(Object.keys(update.data), [taskB]);
    const [push] = await pushesB.exactly(1, 300);
    assert.deepEqual(Object.keys(push.tsk), ['del']);
    applyTaskPush(setB, push);
    assert.deepEqual([...setB.keys()], [taskB]);
  });

  it('the record of a task read: exactly its keys, loc zero-filled (tim only with a location), steps with long keys', async () => {
    const reply = await c.req({ typ: 'tsk', act: 'rea', id: taskB, rea: realm });
    assertSuc(reply);
    const { loc, ...rest } = reply.dat;
    assert.equal(typeof loc.tim, 'string');
    assert.deepEqual({ ...loc, tim: undefined }, { ...zeroLoc({ lon: 2, lat: 1 }), tim: undefined });
    assert.deepEqual(rest, {
      id: taskB,
      lab: 'label for task b',
      dsc: 'description for task b',
      sts: '$hkt_blocked',
      stp: [
        { label: 'step 1', status: '$hkt_completed', data: { weight: 1 } },
        { label: 'step 2', status: '$hkt_completed', data: { weight: 2 } },
      ],
      dat: {},
    });
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: taskC, rea: realm, tid: targetA }));
    assert.deepEqual((await c.req({ typ: 'tsk', act: 'rea', id: taskC, rea: realm })).dat, { id: taskC, sts: '$hkt_not_started', stp: [], tid: targetA, loc: zeroLoc(), dat: {} });
  });

  it('the same calls over HTTP (/api/v1): create, read, list in creation order, update, delete', async () => {
    const http = (m: Msg): Promise<Json> => httpRequest(c.url, c.token, m);
    const hr = uniqueId('realm-http');
    await createRealm(c.url, c.token, hr);
    const [x, y] = [uniqueId('task-x'), uniqueId('task-y')];
    assertSuc(await http(createMessage(y, hr, { label: 'y', location: { latitude: 52.5, longitude: 13.4 }, data: { parcel: 3 } })));
    assertSuc(await http(createMessage(x, hr, { label: 'x', targetId: 'van/1', status: '$hkt_in_progress' })));
    assertError(await http(createMessage(x, hr, { label: 'x again', targetId: 'van/2' })), `task with id ${x} already exists`, 409, { typ: 'tsk', act: 'cre' });
    const listed = await http({ typ: 'tsk', act: 'lis', rea: hr });
    assertSuc(listed);
    assert.deepEqual(Object.keys(listed.dat), [y, x]);
    assert.equal(listed.dat[x].lab, 'x', 'the 409 changed nothing');
    assertSuc(await http({ typ: 'tsk', act: 'upd', id: y, rea: hr, dat: { parcel: null, signed: true }, sts: '$hkt_completed' }));
    const read = asRead((await http({ typ: 'tsk', act: 'rea', id: y, rea: hr })).dat);
    assert.deepEqual(read.data, { signed: true });
    assert.equal(read.status, '$hkt_completed');
    assert.equal(read.location.latitude, 52.5);
    assertSuc(await http({ typ: 'tsk', act: 'del', id: y, rea: hr }));
    assertError(await http({ typ: 'tsk', act: 'del', id: y, rea: hr }), `unknown task ${y}`, 404);
    assertError(await http({ typ: 'tsk', act: 'upd', id: y, rea: hr, lab: 'z' }), `unknown task ${y}`, 404);
    assert.deepEqual(Object.keys((await http({ typ: 'tsk', act: 'lis', rea: hr })).dat), [x]);
    assertError(await http({ typ: 'tsk', act: 'lis', rea: uniqueId('nowhere') }), /^unknown realm /, 404);
  });
});

describe('conformance: task input, subscriptions and rights (compat 4.10, 5)', () => {
  const c = conformanceSuite('task-rules');
  async function freshRealm(): Promise<string> {
    const realm = uniqueId('tasks');
    await createRealm(c.url, c.token, realm);
    return realm;
  }

  it('bad input is a 400 naming the key in v1 words, and stores nothing', async () => {
    const realm = await freshRealm();
    const id = uniqueId('bad');
    const bad: [Msg, RegExp][] = [
      [{ tid: 'a', loc: { lat: 1, lon: 2 } }, /^a task has either a target object id \(tid\) or a location \(loc\), not both/],
      [{ lab: 'only a label' }, /^a task needs either a target object id \(tid\) or a location \(loc\)/],
      [{ tid: 'a', sts: 'done' }, /^sts must be one of "\$hkt_not_started"/],
      [{ tid: 'a', sts: null }, /^sts must be one of/],
      [{ tid: 'a', stp: [{ lab: 's', sts: 'later' }] }, /^stp\[0\]\.sts must be one of/],
      [{ tid: 'a', stp: ['step one'] }, /^stp\[0\] must be a JSON object \(got the string "step one"\)$/],
      [{ tid: 'a', stp: { lab: 's' } }, /^stp must be an array of step objects \{lab, sts, dat\} \(got an object\)$/],
      [{ tid: 'a', stp: [{ lab: 's', dat: 'heavy' }] }, /^stp\[0\]\.dat must be a JSON object \(got the string "heavy"\)$/],
      [{ tid: 'a', stp: [{ lab: 's', dat: { '': 1 } }] }, /^stp\[0\]\.dat key must not be empty$/],
      [{ tid: 'a', stp: [{ lab: 7 }] }, /^stp\[0\]\.lab must be a string or null \(got 7\)$/],
      [{ tid: '' }, /^tid must not be empty$/],
      [{ tid: null }, /^tid must be an object id; null is not allowed/],
      [{ loc: { lat: 91, lon: 0 } }, /^loc\.lat must be a number between -90 and 90 \(got 91\)$/],
      [{ loc: { lon: 2 } }, /^loc\.lat is required$/],
      [{ tid: 'a', lab: 'x'.repeat(1025) }, /^lab is too long: at most 1024 characters are allowed$/],
      [{ tid: 'a', dsc: 'x'.repeat(16_385) }, /^dsc is too long: at most 16384 characters are allowed$/],
      [{ tid: 'a', dsc: 5 }, /^dsc must be a string or null \(got 5\)$/],
      [{ tid: 'a', dat: [1, 2] }, /^dat must be a JSON object \(got an array\)$/],
      [{ tid: 'a', dat: { '': 1 } }, /^dat key must not be empty$/],
    ];
    for (const [fields, message] of bad) {
      const reply = await c.req({ typ: 'tsk', act: 'cre', id, rea: realm, ...fields });
      assertError(reply, message, 400, { typ: 'tsk', act: 'cre' });
    }
    const tooMany = await c.req({ typ: 'tsk', act: 'cre', id, rea: realm, tid: 'a', stp: Array.from({ length: 1001 }, () => ({ lab: 's' })) });
    assertError(tooMany, 'stp has 1001 steps; at most 1000 are allowed', 400);
    assertError(await c.req({ typ: 'tsk', act: 'cre', rea: realm, tid: 'a' }), 'id is required', 400);
    assert.deepEqual((await c.req({ typ: 'tsk', act: 'lis', rea: realm })).dat, {});
    // An update with bad input changes nothing either.
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id, rea: realm, tid: 'a', lab: 'kept', dat: { n: 1 } }));
    const before = (await c.req({ typ: 'tsk', act: 'rea', id, rea: realm })).dat;
    for (const fields of [{ tid: 'b', loc: { lat: 1, lon: 1 } }, { lab: 'changed', sts: 'nope' }, { dat: { n: 2 }, stp: [{ sts: 'x' }] }, { loc: null }]) {
      assertError(await c.req({ typ: 'tsk', act: 'upd', id, rea: realm, ...fields }), /./, 400, { typ: 'tsk', act: 'upd' });
    }
    assert.deepEqual((await c.req({ typ: 'tsk', act: 'rea', id, rea: realm })).dat, before);
  });

  it('an update switches the target: loc drops tid, tid drops loc; steps replace; dat merges, null removes', async () => {
    const realm = await freshRealm();
    const id = uniqueId('job');
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id, rea: realm, tid: 'van/1', stp: [{ lab: 'a' }, { lab: 'b' }], dat: { a: 1, b: 2 } }));
    assertSuc(await c.req({ typ: 'tsk', act: 'upd', id, rea: realm, loc: { lat: 52.5, lon: 13.4, tim: '2024-05-01T10:00:00Z' }, stp: [{ lab: 'c', sts: '$hkt_paused' }], dat: { a: null, c: 3 } }));
    const moved = (await c.req({ typ: 'tsk', act: 'rea', id, rea: realm })).dat;
    assert.equal(moved.tid, undefined);
    assert.deepEqual(moved.loc, zeroLoc({ lat: 52.5, lon: 13.4, tim: '2024-05-01T10:00:00.000Z' }));
    assert.deepEqual(moved.stp, [{ label: 'c', status: '$hkt_paused', data: {} }]);
    assert.deepEqual(moved.dat, { b: 2, c: 3 });
    assertSuc(await c.req({ typ: 'tsk', act: 'upd', id, rea: realm, tid: 'van/2', stp: [] }));
    const back = (await c.req({ typ: 'tsk', act: 'rea', id, rea: realm })).dat;
    assert.equal(back.tid, 'van/2');
    assert.deepEqual(back.loc, zeroLoc());
    assert.deepEqual(back.stp, []);
  });

  it('a subscription hears creates, updates and deletes from another connection (and HTTP) as cre/upd/del, once each; none after its del', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('task-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await c.req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk', sty: 'rea' } }));
    const other: HivekitWire = await connectWire(c.url, c.token);
    const id = uniqueId('job');
    assertSuc(await other.request({ typ: 'tsk', act: 'cre', id, rea: realm, tid: 'van/1', lab: 'one' }));
    const [created] = await pushes.atLeast(1, 1000);
    assert.deepEqual(created, { typ: 'sub', id: sid, uty: 'dta', tsk: { cre: { [id]: { id, lab: 'one', sts: '$hkt_not_started', stp: [], tid: 'van/1', loc: zeroLoc(), dat: {} } } } });
    assertSuc(await httpRequest(c.url, c.token, { typ: 'tsk', act: 'upd', id, rea: realm, sts: '$hkt_in_progress' }));
    await pushes.atLeast(2, 1000);
    assert.deepEqual(pushes.got[1], { typ: 'sub', id: sid, uty: 'dta', tsk: { upd: { [id]: { id, lab: 'one', sts: '$hkt_in_progress', stp: [], tid: 'van/1', loc: zeroLoc(), dat: {} } } } });
    assertSuc(await other.request({ typ: 'tsk', act: 'del', id, rea: realm }));
    await pushes.atLeast(3, 1000);
    assert.deepEqual(pushes.got[2], { typ: 'sub', id: sid, uty: 'dta', tsk: { del: { [id]: { id, lab: 'one', sts: '$hkt_in_progress', stp: [], tid: 'van/1', loc: zeroLoc(), dat: {} } } } });
    // Created and deleted in one frame (usually one push cycle: then nothing is pushed); the
    // failed create pushes nothing, so the client's set ends without the task either way.
    const quick = uniqueId('quick');
    await other.batch([
      { typ: 'tsk', act: 'cre', id: quick, rea: realm, tid: 'x' },
      { typ: 'tsk', act: 'del', id: quick, rea: realm },
      { typ: 'tsk', act: 'cre', id: quick, rea: realm, tid: 'x', loc: { lat: 1, lon: 1 } },
    ]);
    await sleep(200);
    const later = pushes.got.slice(3);
    assert.ok(later.every((p: Json) => p.tsk.upd === undefined && Object.keys({ ...p.tsk.cre, ...p.tsk.del }).every((k) => k === quick)), JSON.stringify(later));
    const held = new Map<string, Json>();
    for (const p of later) applyTaskPush(held, p);
    assert.equal(held.has(quick), false);
    const seen = pushes.got.length;
    assertSuc(await c.req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
    assertSuc(await other.request({ typ: 'tsk', act: 'cre', id: uniqueId('after'), rea: realm, tid: 'x' }));
    await sleep(200);
    assert.equal(pushes.got.length, seen, 'nothing after the subscription was deleted');
    await other.close();
  });

  it('exe in an empty realm: one full push {tsk:{cre:{}}}; an update of the subscription pushes the full set again', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('task-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await c.req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk', sty: 'rea', exe: true } }));
    assert.deepEqual(await pushes.exactly(1, 300), [{ typ: 'sub', id: sid, uty: 'ful', tsk: { cre: {} } }]);
    const [a, b] = [uniqueId('a'), uniqueId('b')];
    await c.wire.batch([
      { typ: 'tsk', act: 'cre', id: b, rea: realm, tid: 'x' },
      { typ: 'tsk', act: 'cre', id: a, rea: realm, loc: { lat: 1, lon: 2 } },
    ]);
    const [delta] = (await pushes.atLeast(2, 1000)).slice(1);
    assert.deepEqual(Object.keys(delta.tsk.cre), [b, a], 'both creates of one cycle in one push');
    assertSuc(await c.req({ typ: 'sub', act: 'upd', id: sid, rea: realm, dat: { typ: 'tsk', sty: 'rea' } }));
    const [, , full] = await pushes.atLeast(3, 1000);
    assert.equal(full.uty, 'ful');
    assert.deepEqual(Object.keys(full.tsk.cre), [b, a], 'creation order');
    assertSuc(await c.req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
  });

  it('rights: per R on job/* reads and lists only job/*; C/U/D need their letter on the id; subscriptions hold only readable tasks', async () => {
    const realm = await freshRealm();
    const [job, secret] = [`job/${uniqueId('1')}`, `secret/${uniqueId('2')}`];
    const reader = await signToken({ sub: 'reader' }, { claims: { per: { [realm]: { 'job/*': 'R' } } } });
    const wire = await connectWire(c.url, reader);
    const sid = uniqueId('task-subscription');
    const pushes = wire.watch(sid);
    assertSuc(await wire.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk', exe: true } }));
    assert.deepEqual(await pushes.exactly(1, 200), [{ typ: 'sub', id: sid, uty: 'ful', tsk: { cre: {} } }]);
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: job, rea: realm, tid: 'x' }));
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: secret, rea: realm, tid: 'x' }));
    assertError(await wire.request({ typ: 'tsk', act: 'cre', id: `job/${uniqueId('3')}`, rea: realm, tid: 'x' }), /^this token|^the token's permissions/, 403);
    assertError(await wire.request({ typ: 'tsk', act: 'upd', id: job, rea: realm, lab: 'x' }), /./, 403);
    assertError(await wire.request({ typ: 'tsk', act: 'del', id: job, rea: realm }), /./, 403);
    assertError(await wire.request({ typ: 'tsk', act: 'rea', id: secret, rea: realm }), `the token's permissions (per) do not grant R on ${secret}`, 403);
    assertSuc(await wire.request({ typ: 'tsk', act: 'rea', id: job, rea: realm }));
    assert.deepEqual(Object.keys((await wire.request({ typ: 'tsk', act: 'lis', rea: realm })).dat), [job]);
    const got = await pushes.atLeast(2, 1000);
    await sleep(100);
    const ids = pushes.got.flatMap((p: Json) => Object.keys(p.tsk.cre ?? {}));
    assert.deepEqual(ids, [job], JSON.stringify(got));
    assert.equal(pushes.got.length, 2, 'the unreadable task pushed nothing');
    assert.equal((await c.req({ typ: 'tsk', act: 'rea', id: job, rea: realm })).dat.lab, undefined, 'the refused update changed nothing');
    await wire.close();
  });

  it('objects keep their task ids (tds) as given and show them in reads and pushes, not in list entries', async () => {
    const realm = await freshRealm();
    const job = uniqueId('job');
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: job, rea: realm, tid: 'van' }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await c.req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea' } }));
    assertSuc(await c.req({ typ: 'obj', act: 'cre', id: 'van', rea: realm, lab: 'Van', tds: [job] }));
    const read = await c.read('obj', 'van', realm);
    assert.deepEqual(read.tds, [job]);
    const [push] = await pushes.atLeast(1, 1000);
    assert.deepEqual(push.obj.cre.van.tds, [job]);
    assert.deepEqual((await c.req({ typ: 'obj', act: 'lis', rea: realm })).dat, { van: { id: 'van', lab: 'Van', cst: 'dis' } });
    // Deleting the task leaves the object's ids as they were (they are the client's).
    assertSuc(await c.req({ typ: 'tsk', act: 'del', id: job, rea: realm }));
    assert.deepEqual((await c.read('obj', 'van', realm)).tds, [job]);
    assertSuc(await c.req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
  });

  it('deleting the realm removes its tasks and ends its task subscriptions silently', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('task-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await c.req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk' } }));
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: 'job', rea: realm, tid: 'x' }));
    await pushes.atLeast(1, 1000);
    assertSuc(await c.req({ typ: 'rea', act: 'del', id: realm }));
    await createRealm(c.url, c.token, realm);
    assert.deepEqual((await c.req({ typ: 'tsk', act: 'lis', rea: realm })).dat, {});
    assertSuc(await c.req({ typ: 'tsk', act: 'cre', id: 'job', rea: realm, tid: 'x' }));
    await sleep(150);
    assert.equal(pushes.got.length, 1, 'the subscription ended with its realm');
    assertError(await c.req({ typ: 'sub', act: 'del', id: sid, rea: realm }), `unknown subscription ${sid}`, 404);
  });
});
