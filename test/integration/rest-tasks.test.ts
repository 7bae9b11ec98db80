/**
 * REST v2 tasks (docs/api.md "Tasks"): create (409 on an existing id), read, list in creation
 * order, update (data merges, steps replace, a new target replaces the other), delete, every
 * refusal a clear 4xx that leaves the store exactly as it was (dumpStore), rights of opaque
 * tokens and of `per`, and REST writes reaching a v1 task subscription.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, dumpStore, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectWire, signToken, testSecret, uniqueId } from '../support/hivekit-wire.js';

describe('REST v2 tasks', () => {
  let h: Harness;
  let tokens: { read: string; write: string; admin: string };
  const realm = 'fleet';
  const path = (id?: string): string => `/v2/realm/${realm}/task${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;

  before(async () => {
    h = await startHarness({ jwtSecret: testSecret });
    tokens = await makeRealm(h.url, realm);
  });
  after(async () => {
    await h.stop();
  });

  /** Asserts the request is refused with `status` (and `code`, `message`) and changed nothing. */
  async function refused(method: string, url: string, token: string, body: unknown, status: number, code: string, message?: string | RegExp): Promise<void> {
    const before = await dumpStore(h.server.store);
    const reply = await call(h.url, method, url, { token, body });
    assert.equal(reply.status, status, reply.text);
    assert.equal(reply.json.result, 'error');
    assert.equal(reply.json.error.code, code, reply.text);
    if (typeof message === 'string') assert.equal(reply.json.error.message, message);
    else if (message !== undefined) assert.match(reply.json.error.message as string, message);
    assert.equal(await dumpStore(h.server.store), before);
  }

  it('create, read, list in creation order, update, delete', async () => {
    const created = await call(h.url, 'POST', path('job/2'), {
      token: tokens.write,
      body: { label: 'Deliver', targetId: 'truck/1', steps: [{ label: 'Pick up', status: '$hkt_completed', data: { n: 1 } }, {}], data: { a: 1, b: 2 } },
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.json, { id: 'job/2', result: 'success' });
    assert.equal((await call(h.url, 'POST', path('job/1'), { token: tokens.write, body: { id: 'job/1', location: { longitude: 13.4, latitude: 52.5, time: '2026-01-01T10:00:00+01:00' } } })).status, 200);

    const read = await call(h.url, 'GET', path('job/2'), { token: tokens.read });
    assert.equal(read.status, 200);
    const { created: c1, updated: u1, ...rest } = read.json;
    assert.equal(c1, u1);
    assert.ok(!Number.isNaN(Date.parse(c1 as string)));
    assert.deepEqual(rest, {
      id: 'job/2',
      label: 'Deliver',
      description: null,
      status: '$hkt_not_started',
      steps: [
        { label: 'Pick up', status: '$hkt_completed', data: { n: 1 } },
        { label: null, status: '$hkt_not_started', data: {} },
      ],
      targetId: 'truck/1',
      location: null,
      data: { a: 1, b: 2 },
    });
    const list = await call(h.url, 'GET', path(), { token: tokens.read });
    assert.deepEqual(Object.keys(list.json), ['job/2', 'job/1']);
    assert.deepEqual(list.json['job/1'].location, { longitude: 13.4, latitude: 52.5, time: '2026-01-01T09:00:00.000Z' });

    const patched = await call(h.url, 'PATCH', path('job/2'), {
      token: tokens.write,
      body: { description: 'Ring twice', status: '$hkt_failed', steps: [], data: { a: null, c: { d: [1] } }, location: { longitude: 1, latitude: 2 } },
    });
    assert.deepEqual(patched.json, { id: 'job/2', result: 'success' });
    const after = (await call(h.url, 'GET', path('job/2'), { token: tokens.read })).json;
    assert.equal(after.description, 'Ring twice');
    assert.equal(after.status, '$hkt_failed');
    assert.deepEqual(after.steps, []);
    assert.deepEqual(after.data, { b: 2, c: { d: [1] } });
    assert.equal(after.targetId, null);
    assert.equal(after.location.longitude, 1);
    assert.equal(after.created, c1);
    assert.ok((after.updated as string) >= (c1 as string));
    assert.equal(after.label, 'Deliver');

    assert.deepEqual((await call(h.url, 'DELETE', path('job/2'), { token: tokens.write })).json, { id: 'job/2', result: 'success' });
    assert.deepEqual(Object.keys((await call(h.url, 'GET', path(), { token: tokens.read })).json), ['job/1']);
  });

  it('refusals are clear and change nothing', async () => {
    await call(h.url, 'POST', path('kept'), { token: tokens.write, body: { targetId: 'x', label: 'kept' } });
    await refused('POST', path('kept'), tokens.write, { targetId: 'y' }, 409, 'conflict', 'task with id kept already exists');
    await refused('POST', path('new'), tokens.write, { targetId: 'y', location: { longitude: 1, latitude: 1 } }, 400, 'invalid_request', 'a task has either a target object (targetId) or a location, not both: give only one of them');
    await refused('POST', path('new'), tokens.write, { label: 'no target' }, 400, 'invalid_request', 'a task needs either a target object (targetId) or a location: give one of them');
    await refused('POST', path('new'), tokens.write, { targetId: 'y', status: 'done' }, 400, 'invalid_request', /^status must be one of "\$hkt_not_started"/);
    await refused('POST', path('new'), tokens.write, { targetId: 'y', steps: [{ label: 's', state: 'x' }] }, 400, 'invalid_request', 'unknown key "state" in steps[0]; allowed: label, status, data');
    await refused('POST', path('new'), tokens.write, { targetId: 'y', steps: [{ status: 'x' }] }, 400, 'invalid_request', /^steps\[0\]\.status must be one of/);
    await refused('POST', path('new'), tokens.write, { targetId: 'y', taskIds: [] }, 400, 'invalid_request', /^unknown key "taskIds" in the request body; allowed: id, label, description, status, steps, targetId, location, data$/);
    await refused('POST', path('new'), tokens.write, { id: 'other', targetId: 'y' }, 400, 'invalid_id', /differs from the task id in the path/);
    await refused('POST', path('new'), tokens.write, { location: { longitude: 200, latitude: 0 } }, 400, 'invalid_location', /^location\.longitude must be a number between -180 and 180/);
    await refused('POST', path('new'), tokens.write, [], 400, 'invalid_request', /request body must be a JSON object/);
    await refused('PATCH', path('kept'), tokens.write, { targetId: null }, 400, 'invalid_id', /^targetId must be an object id; null is not allowed/);
    await refused('PATCH', path('kept'), tokens.write, { location: null }, 400, 'invalid_location', /^location must be a location object; null is not allowed/);
    await refused('PATCH', path('kept'), tokens.write, { label: 'x', steps: 'none' }, 400, 'invalid_request', /^steps must be an array of step objects/);
    await refused('PATCH', path('missing'), tokens.write, { label: 'x' }, 404, 'not_found', 'unknown task missing');
    await refused('DELETE', path('missing'), tokens.write, undefined, 404, 'not_found', 'unknown task missing');
    await refused('GET', path('missing'), tokens.read, undefined, 404, 'not_found', 'unknown task missing');
    await refused('PUT', path('kept'), tokens.write, { targetId: 'x' }, 405, 'method_not_allowed');
    await refused('POST', path(), tokens.write, {}, 405, 'method_not_allowed');
  });

  it('rights: a read token reads but writes nothing; per grants letters on task ids', async () => {
    await refused('POST', path('r1'), tokens.read, { targetId: 'x' }, 403, 'forbidden');
    await refused('PATCH', path('kept'), tokens.read, { label: 'x' }, 403, 'forbidden');
    await refused('DELETE', path('kept'), tokens.read, undefined, 403, 'forbidden');
    const jwt = await signToken({ sub: 'dispatcher' }, { claims: { per: { [realm]: { 'job/*': 'CRU', '*': 'R' } } } });
    assert.equal((await call(h.url, 'POST', path('job/9'), { token: jwt, body: { targetId: 'x' } })).status, 200);
    assert.equal((await call(h.url, 'PATCH', path('job/9'), { token: jwt, body: { label: 'mine' } })).status, 200);
    await refused('POST', path('other/1'), jwt, { targetId: 'x' }, 403, 'forbidden', "the token's permissions (per) do not grant C on other/1");
    await refused('DELETE', path('job/9'), jwt, undefined, 403, 'forbidden');
    const narrow = await signToken({ sub: 'driver' }, { claims: { per: { [realm]: { 'job/*': 'R' } } } });
    assert.deepEqual(Object.keys((await call(h.url, 'GET', path(), { token: narrow })).json), ['job/1', 'job/9']);
    await refused('GET', path('kept'), narrow, undefined, 403, 'forbidden');
    assert.equal((await call(h.url, 'GET', path(), { token: adminToken })).status, 200);
  });

  it('REST writes reach a v1 task subscription (cre, upd, del)', async () => {
    const jwt = await signToken({ sub: 'watcher' });
    // The realm made by the admin API belongs to the default tenant, which the JWT signs in to.
    const wire = await connectWire(h.url, jwt);
    const sid = uniqueId('task-subscription');
    const pushes = wire.watch(sid);
    assert.equal((await wire.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'tsk' } })).res, 'suc');
    await call(h.url, 'POST', path('live'), { token: tokens.write, body: { targetId: 'x', label: 'L' } });
    const [created] = await pushes.atLeast(1, 1000);
    assert.deepEqual(created.tsk, { cre: { live: { id: 'live', lab: 'L', sts: '$hkt_not_started', stp: [], tid: 'x', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, dat: {} } } });
    await call(h.url, 'PATCH', path('live'), { token: tokens.write, body: { status: '$hkt_completed' } });
    const [, updated] = await pushes.atLeast(2, 1000);
    assert.equal(updated.tsk.upd.live.sts, '$hkt_completed');
    await call(h.url, 'DELETE', path('live'), { token: tokens.write });
    const [, , deleted] = await pushes.atLeast(3, 1000);
    assert.deepEqual(Object.keys(deleted.tsk as object), ['del']);
    assert.equal(deleted.tsk.del.live.sts, '$hkt_completed');
    await wire.close();
  });
});
