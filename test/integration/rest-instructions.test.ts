/**
 * REST v2 instructions (hivekit-rest.md 6, docs/api.md "Instructions"): create, read, list,
 * update (data merges, a new source restarts), delete; 409, 404, syntax errors saying where,
 * the two limits, rights (opaque scopes and `per`), and that a refused request changes
 * nothing. Against a real server on SQLite with the real language.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { signToken, testSecret } from '../support/hivekit-wire.js';

const source = 'when\n  object(type="scooter", charge<0.2)\nthen\n  set("needsCharging", "true")\nuntil\n  set("needsCharging", "false")';
const otherSource = 'every 10 min\nwhen object(type="van") then delete()';

describe('REST v2: instructions', () => {
  let h: Harness;
  let tokens: { read: string; write: string; admin: string };
  const path = (id?: string, realm = 'fleet'): string => `/v2/realm/${realm}/instruction${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;

  before(async () => {
    h = await startHarness({ jwtSecret: testSecret, instructionMaxSourceChars: 400, instructionMaxPerRealm: 5 });
    tokens = await makeRealm(h.url, 'fleet');
  });
  after(async () => {
    await h.stop();
  });

  const list = async (realm = 'fleet'): Promise<unknown> => (await call(h.url, 'GET', path(undefined, realm), { token: tokens.read })).json;

  it('POST creates ({"id","result":"success"}), GET reads {id,label,instruction,data,suspended}, the list has no source', async () => {
    const created = await call(h.url, 'POST', path('scooters/low'), { token: tokens.write, body: { label: 'Low charge', instruction: source, data: { some: 'Value' } } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.json, { id: 'scooters/low', result: 'success' });
    const read = await call(h.url, 'GET', path('scooters/low'), { token: tokens.read });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json, { id: 'scooters/low', label: 'Low charge', instruction: source, data: { some: 'Value' }, suspended: null });
    assert.deepEqual(await list(), { 'scooters/low': { id: 'scooters/low', label: 'Low charge', data: { some: 'Value' }, suspended: null } });
  });

  it('POST on an existing id is 409 `instruction with id <id> already exists` and keeps the first', async () => {
    await call(h.url, 'POST', path('dup'), { token: tokens.write, body: { label: 'First', instruction: source } });
    const again = await call(h.url, 'POST', path('dup'), { token: tokens.write, body: { label: 'Second', instruction: otherSource } });
    assert.equal(again.status, 409, again.text);
    assert.deepEqual(again.json, { result: 'error', error: { code: 'conflict', message: 'instruction with id dup already exists' } });
    const read = await call(h.url, 'GET', path('dup'), { token: tokens.read });
    assert.equal(read.json.label, 'First');
    assert.equal(read.json.instruction, source);
    await call(h.url, 'DELETE', path('dup'), { token: tokens.write });
  });

  it('a syntax error is 400 invalid_instruction saying line, column and what was expected; a missing source too; nothing is stored', async () => {
    const before = await list();
    const bad = await call(h.url, 'POST', path('bad'), { token: tokens.write, body: { label: 'B', instruction: 'when blablub\n  object(type="scooter")\nthen delete()' } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.code, 'invalid_instruction');
    assert.match(bad.json.error.message, /^Error: Incorrect Syntax\. Line 2, column 3: expected /);
    const missing = await call(h.url, 'POST', path('bad'), { token: tokens.write, body: { label: 'B' } });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error.message, /^Error: Incorrect Syntax\. The instruction source is missing/);
    const unknownFunction = await call(h.url, 'POST', path('bad'), { token: tokens.write, body: { instruction: 'when object(type="x") then explode()' } });
    assert.equal(unknownFunction.status, 400, unknownFunction.text);
    assert.match(unknownFunction.json.error.message, /^Error: Incorrect Syntax\. Line 1, column \d+: /);
    assert.equal((await call(h.url, 'GET', path('bad'), { token: tokens.read })).status, 404);
    assert.deepEqual(await list(), before);
  });

  it('PATCH: label replaces, data merges (null removes), the source changes; {"id","result":"success"}', async () => {
    await call(h.url, 'POST', path('b'), { token: tokens.write, body: { label: 'B', instruction: source, data: { letter: 'B', old: 1 } } });
    const patched = await call(h.url, 'PATCH', path('b'), { token: tokens.write, body: { label: 'New Label', data: { charge: 0.5, old: null } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { id: 'b', result: 'success' });
    const read = await call(h.url, 'GET', path('b'), { token: tokens.read });
    assert.deepEqual(read.json, { id: 'b', label: 'New Label', instruction: source, data: { letter: 'B', charge: 0.5 }, suspended: null });
    assert.equal((await call(h.url, 'PATCH', path('b'), { token: tokens.write, body: { instruction: otherSource } })).status, 200);
    assert.equal((await call(h.url, 'GET', path('b'), { token: tokens.read })).json.instruction, otherSource);
    const bad = await call(h.url, 'PATCH', path('b'), { token: tokens.write, body: { label: 'X', instruction: 'when then', data: { y: 1 } } });
    assert.equal(bad.status, 400);
    assert.deepEqual((await call(h.url, 'GET', path('b'), { token: tokens.read })).json, { id: 'b', label: 'New Label', instruction: otherSource, data: { letter: 'B', charge: 0.5 }, suspended: null });
    await call(h.url, 'DELETE', path('b'), { token: tokens.write });
  });

  it('unknown ids: GET, PATCH and DELETE are 404 `unknown instruction <id>`; DELETE answers {"id","result":"success"} once', async () => {
    await call(h.url, 'POST', path('gone'), { token: tokens.write, body: { instruction: source } });
    const deleted = await call(h.url, 'DELETE', path('gone'), { token: tokens.write });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.json, { id: 'gone', result: 'success' });
    for (const [method, body] of [['GET', undefined], ['PATCH', { label: 'x' }], ['DELETE', undefined]] as const) {
      const res = await call(h.url, method, path('gone'), { token: method === 'GET' ? tokens.read : tokens.write, ...(body === undefined ? {} : { body }) });
      assert.equal(res.status, 404, `${method}: ${res.text}`);
      assert.deepEqual(res.json, { result: 'error', error: { code: 'not_found', message: 'unknown instruction gone' } });
    }
    const ghost = await call(h.url, 'GET', path(undefined, 'ghost'), { token: adminToken });
    assert.equal(ghost.status, 404);
    assert.equal(ghost.json.error.message, 'unknown realm ghost');
  });

  it('limits: a source over LOCUS_INSTRUCTION_MAX_SOURCE_CHARS and a sixth instruction are 413 naming the setting', async () => {
    const long = await call(h.url, 'POST', path('long'), { token: tokens.write, body: { instruction: `${source}\n${'// padding '.repeat(40)}` } });
    assert.equal(long.status, 413, long.text);
    assert.match(long.json.error.message, /at most 400 are allowed \(LOCUS_INSTRUCTION_MAX_SOURCE_CHARS\)/);
    const realm = 'full';
    const own = await makeRealm(h.url, realm);
    for (let i = 0; i < 5; i++) assert.equal((await call(h.url, 'POST', path(`i${i}`, realm), { token: own.write, body: { instruction: source } })).status, 200);
    const sixth = await call(h.url, 'POST', path('i5', realm), { token: own.write, body: { instruction: source } });
    assert.equal(sixth.status, 413, sixth.text);
    assert.match(sixth.json.error.message, /holds 5 instructions; at most 5 are allowed \(LOCUS_INSTRUCTION_MAX_PER_REALM\)/);
    assert.equal(Object.keys((await call(h.url, 'GET', path(undefined, realm), { token: own.read })).json as object).length, 5);
  });

  it('bad bodies are 400s naming the field: unknown keys, a label that is not a string, data that is not an object, an id that differs', async () => {
    const before = await list();
    for (const body of [{ instruction: source, code: 'x' }, { instruction: source, label: 5 }, { instruction: source, data: [1] }, { id: 'other', instruction: source }, 'text']) {
      const res = await call(h.url, 'POST', path('c'), { token: tokens.write, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    }
    assert.deepEqual(await list(), before);
  });

  it('rights: a read token reads but may not create, change or delete (403); per needs the letter on every id to write', async () => {
    await call(h.url, 'POST', path('r1'), { token: tokens.write, body: { instruction: source } });
    const created = await call(h.url, 'POST', path('r2'), { token: tokens.read, body: { instruction: source } });
    assert.equal(created.status, 403, created.text);
    assert.equal((await call(h.url, 'PATCH', path('r1'), { token: tokens.read, body: { label: 'x' } })).status, 403);
    assert.equal((await call(h.url, 'DELETE', path('r1'), { token: tokens.read })).status, 403);
    assert.equal((await call(h.url, 'GET', path('r1'), { token: tokens.read })).status, 200);
    assert.equal((await call(h.url, 'GET', path('r2'), { token: tokens.read })).status, 404, 'the refused create stored nothing');

    const partial = await signToken({ sub: 'partial' }, { claims: { per: { fleet: { 'r*': 'CRUD' } } } });
    const refused = await call(h.url, 'POST', path('r3'), { token: partial, body: { instruction: source } });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.json.error.message, /do not grant C on every id of realm fleet/);
    assert.equal((await call(h.url, 'DELETE', path('r1'), { token: partial })).status, 403);
    assert.equal((await call(h.url, 'GET', path('r1'), { token: partial })).status, 200);
    assert.equal((await call(h.url, 'GET', path('scooters/low'), { token: partial })).status, 403);
    assert.deepEqual(Object.keys((await call(h.url, 'GET', path(), { token: partial })).json as object), ['r1']);

    const everyId = await signToken({ sub: 'every' }, { claims: { per: { fleet: { '*': 'CU' } } } });
    assert.equal((await call(h.url, 'POST', path('r3'), { token: everyId, body: { instruction: source } })).status, 200);
    assert.equal((await call(h.url, 'DELETE', path('r3'), { token: everyId })).status, 403, 'C and U without D');
    assert.equal((await call(h.url, 'DELETE', path('r3'), { token: tokens.write })).status, 200);
    assert.equal((await call(h.url, 'DELETE', path('r1'), { token: tokens.write })).status, 200);
  });

  it('methods: PUT on an instruction and POST on the list are 405', async () => {
    assert.equal((await call(h.url, 'PUT', path('x'), { token: tokens.write, body: { instruction: source } })).status, 405);
    assert.equal((await call(h.url, 'POST', path(), { token: tokens.write, body: {} })).status, 405);
  });
});
