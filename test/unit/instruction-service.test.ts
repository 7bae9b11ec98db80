/**
 * InstructionService (service/instructions.ts) over an in-memory record store: validation
 * (ids, label, data, a missing or refused source, the two limits), the update rules (data
 * merges, a changed source restarts, the same source resumes a suspended one), 404/409, the
 * events on the bus, and that a refused request changes nothing and announces nothing.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { LocusEvent } from '../../internal/domain/events.js';
import type { Realm } from '../../internal/domain/types.js';
import { LocusError, type ErrorCode } from '../../internal/errors.js';
import { InstructionService, type InstructionCompiler } from '../../internal/service/instructions.js';
import { MemoryInstructions } from '../support/memory-instructions.js';

const realm: Realm = { id: 'tenant-a/fleet', tenant: 'tenant-a', name: 'fleet', label: null, data: {}, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: '2026-01-01T00:00:00.000Z' };

const good = 'when object(type="scooter") then delete()';
const otherGood = 'when object(type="van") then delete()';

/**
 * Stands in for the language (tested on its own): refuses any source containing `blablub` the
 * way compileInstruction refuses a syntax error, and counts its calls.
 */
function fakeCompiler(): InstructionCompiler & { calls: string[] } {
  const calls: string[] = [];
  const compile = (source: string): unknown => {
    calls.push(source);
    if (source.includes('blablub')) throw new LocusError('invalid_instruction', 'Error: Incorrect Syntax. Line 1, column 6: expected "object" but "blablub" found.');
    return {};
  };
  return Object.assign(compile, { calls });
}

async function rejects(promise: Promise<unknown>, code: ErrorCode, message: RegExp | string): Promise<LocusError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof LocusError, `expected a LocusError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else assert.match(caught.message, message);
  return caught;
}

describe('InstructionService', () => {
  let store: MemoryInstructions;
  let compiler: ReturnType<typeof fakeCompiler>;
  let published: { realm: string; events: readonly LocusEvent[] }[];
  let now: number;
  let service: InstructionService;

  const make = (limits = { maxSourceChars: 10_000, maxPerRealm: 1000 }): InstructionService =>
    new InstructionService(store, compiler, { publish: (r, events) => published.push({ realm: r, events }) }, () => now, limits);

  beforeEach(() => {
    store = new MemoryInstructions();
    compiler = fakeCompiler();
    published = [];
    now = Date.parse('2026-11-28T10:00:00.000Z');
    service = make();
  });

  it('creates with label, source and data; reads and lists it; announces `cre` on the realm', async () => {
    const created = await service.create(realm, 'scooters/low', { label: 'Low charge', instruction: good, data: { some: 'Value', drop: null } });
    assert.deepEqual(created, {
      id: 'scooters/low',
      label: 'Low charge',
      source: good,
      data: { some: 'Value' },
      created: '2026-11-28T10:00:00.000Z',
      updated: '2026-11-28T10:00:00.000Z',
      generation: 1,
      suspended: null,
    });
    assert.deepEqual(compiler.calls, [good]);
    assert.deepEqual(await service.get(realm, 'scooters/low'), created);
    assert.deepEqual(await service.list(realm), [created]);
    assert.deepEqual(published, [{ realm: 'tenant-a/fleet', events: [{ kind: 'ins', realm: 'tenant-a/fleet', id: 'scooters/low', act: 'cre' }] }]);
  });

  it('a label and data are optional; the source keeps its exact text, whitespace included', async () => {
    const source = `\n   when\n      object(type="scooter")\n   then\n      delete()\n  `;
    const created = await service.create(realm, 'plain', { instruction: source });
    assert.equal(created.label, null);
    assert.deepEqual(created.data, {});
    assert.equal((await service.get(realm, 'plain')).source, source);
  });

  it('refuses an existing id with `instruction with id <id> already exists` (409) and keeps the first', async () => {
    await service.create(realm, 'a', { label: 'First', instruction: good });
    await rejects(service.create(realm, 'a', { label: 'Second', instruction: otherGood }), 'conflict', 'instruction with id a already exists');
    const kept = await service.get(realm, 'a');
    assert.equal(kept.label, 'First');
    assert.equal(kept.source, good);
    assert.equal(published.length, 1);
  });

  it('a missing source, null, or a non-string is a syntax error beginning `Error: Incorrect Syntax.`; nothing is stored', async () => {
    for (const body of [{}, { label: 'B' }, { instruction: null }, { instruction: 42 }, { instruction: ['when'] }]) {
      const err = await rejects(service.create(realm, 'b', body), 'invalid_instruction', /^Error: Incorrect Syntax\. /);
      assert.equal(err.status, 400);
    }
    assert.deepEqual(await service.list(realm), []);
    assert.deepEqual(published, []);
    assert.deepEqual(compiler.calls, [], 'a missing source never reaches the language');
  });

  it("the language's refusal is passed on unchanged and nothing is stored", async () => {
    await rejects(service.create(realm, 'b', { instruction: 'when blablub object()' }), 'invalid_instruction', /^Error: Incorrect Syntax\. Line 1, column 6/);
    assert.deepEqual(await service.list(realm), []);
    assert.deepEqual(published, []);
  });

  it('bad ids, labels, data and unknown keys are 400s naming the field; nothing is stored', async () => {
    await rejects(service.create(realm, '', { instruction: good }), 'invalid_id', /instruction id/);
    await rejects(service.create(realm, 'x'.repeat(300), { instruction: good }), 'invalid_id', /instruction id/);
    await rejects(service.create(realm, 'c', { instruction: good, label: 5 }), 'invalid_request', /^label must be a string or null/);
    await rejects(service.create(realm, 'c', { instruction: good, data: [1] }), 'invalid_data', /data/);
    await rejects(service.create(realm, 'c', { instruction: good, source: good }), 'invalid_request', /unknown key "source"/);
    await rejects(service.create(realm, 'c', { id: 'other', instruction: good }), 'invalid_id', /differs from the instruction id/);
    await rejects(service.create(realm, 'c', 'a string'), 'invalid_request', /object/);
    assert.deepEqual(await service.list(realm), []);
    assert.deepEqual(published, []);
  });

  it('a source longer than maxSourceChars is 413 naming the limit; the limit itself is allowed', async () => {
    service = make({ maxSourceChars: 60, maxPerRealm: 10 });
    const fits = good.padEnd(60, ' ');
    await service.create(realm, 'fits', { instruction: fits });
    const err = await rejects(service.create(realm, 'long', { instruction: `${fits} ` }), 'too_large', 'the instruction source is 61 characters long; at most 60 are allowed (LOCUS_INSTRUCTION_MAX_SOURCE_CHARS)');
    assert.equal(err.status, 413);
    await rejects(service.update(realm, 'fits', { instruction: `${fits} ` }), 'too_large', /at most 60/);
    assert.equal((await service.get(realm, 'fits')).source, fits);
    assert.deepEqual((await service.list(realm)).map((r) => r.id), ['fits']);
  });

  it('a realm holds at most maxPerRealm instructions (413); other realms and an existing id are unaffected', async () => {
    service = make({ maxSourceChars: 10_000, maxPerRealm: 2 });
    await service.create(realm, 'one', { instruction: good });
    await service.create(realm, 'two', { instruction: good });
    const err = await rejects(service.create(realm, 'three', { instruction: good }), 'too_large', /realm fleet holds 2 instructions; at most 2 are allowed \(LOCUS_INSTRUCTION_MAX_PER_REALM\)/);
    assert.equal(err.status, 413);
    await rejects(service.create(realm, 'two', { instruction: good }), 'conflict', 'instruction with id two already exists');
    await service.create({ ...realm, id: 'tenant-a/other', name: 'other' }, 'three', { instruction: good });
    await service.delete(realm, 'one');
    await service.create(realm, 'three', { instruction: good });
    assert.deepEqual((await service.list(realm)).map((r) => r.id), ['two', 'three']);
  });

  it('update: label replaces, data merges (null removes), the same source does not restart it; `upd` announced', async () => {
    await service.create(realm, 'b', { label: 'B', instruction: good, data: { letter: 'B', old: 1 } });
    now += 1000;
    const updated = await service.update(realm, 'b', { label: 'New Label', instruction: good, data: { charge: 0.5, old: null } });
    assert.equal(updated.label, 'New Label');
    assert.deepEqual(updated.data, { letter: 'B', charge: 0.5 });
    assert.equal(updated.generation, 1, 'the same source does not restart the instruction');
    assert.equal(updated.updated, '2026-11-28T10:00:01.000Z');
    assert.deepEqual(published.at(-1), { realm: 'tenant-a/fleet', events: [{ kind: 'ins', realm: 'tenant-a/fleet', id: 'b', act: 'upd' }] });
    const label = await service.update(realm, 'b', { label: null });
    assert.equal(label.label, null);
    assert.deepEqual(label.data, { letter: 'B', charge: 0.5 }, 'an update without data keeps it');
  });

  it('update with a new source restarts it (generation bumped); the same source resumes a suspended one', async () => {
    await service.create(realm, 'r', { instruction: good });
    const restarted = await service.update(realm, 'r', { instruction: otherGood });
    assert.equal(restarted.source, otherGood);
    assert.equal(restarted.generation, 2);
    await store.update(realm.id, 'r', { suspended: 'sendToUrl failed 10 times in a row' }, 'x');
    assert.equal((await service.get(realm, 'r')).suspended, 'sendToUrl failed 10 times in a row');
    const kept = await service.update(realm, 'r', { label: 'still suspended' });
    assert.equal(kept.suspended, 'sendToUrl failed 10 times in a row', 'an update without the source leaves it suspended');
    const resumed = await service.update(realm, 'r', { instruction: otherGood });
    assert.equal(resumed.suspended, null);
    assert.equal(resumed.generation, 3);
  });

  it('a refused update changes nothing and announces nothing', async () => {
    await service.create(realm, 'b', { label: 'B', instruction: good, data: { letter: 'B' } });
    const before = await service.get(realm, 'b');
    const count = published.length;
    await rejects(service.update(realm, 'b', { label: 'X', instruction: 'when blablub', data: { y: 1 } }), 'invalid_instruction', /^Error: Incorrect Syntax\./);
    await rejects(service.update(realm, 'b', { label: 'X', instruction: null }), 'invalid_instruction', /^Error: Incorrect Syntax\. The instruction source is missing/);
    await rejects(service.update(realm, 'b', { label: 7 }), 'invalid_request', /label/);
    await rejects(service.update(realm, 'b', { data: 'x' }), 'invalid_data', /data/);
    assert.deepEqual(await service.get(realm, 'b'), before);
    assert.equal(published.length, count);
  });

  it('update, read and delete of a missing instruction are `unknown instruction <id>` (404)', async () => {
    await rejects(service.update(realm, 'gone', { label: 'x' }), 'not_found', 'unknown instruction gone');
    await rejects(service.get(realm, 'gone'), 'not_found', 'unknown instruction gone');
    await rejects(service.delete(realm, 'gone'), 'not_found', 'unknown instruction gone');
    assert.deepEqual(published, []);
  });

  it('delete removes it and announces `del`; list keeps creation order', async () => {
    for (const id of ['z', 'a', 'm']) await service.create(realm, id, { instruction: good });
    await service.delete(realm, 'a');
    assert.deepEqual((await service.list(realm)).map((r) => r.id), ['z', 'm']);
    assert.deepEqual(published.at(-1)?.events, [{ kind: 'ins', realm: 'tenant-a/fleet', id: 'a', act: 'del' }]);
  });
});
