/**
 * The instruction log (instructions/delivery/instruction-log.ts) on the in-process bus: events
 * travel as `log` events, a listening process keeps the latest ones per realm in a bounded
 * ring (oldest first, each kept once, its own included), nobody keeps what nobody listens to;
 * and the retry policy's verdicts and waits (retry-policy.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocusEvent } from '../../internal/domain/events.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { InstructionLog, LogRing, maxLogMessage } from '../../internal/instructions/delivery/instruction-log.js';
import { backoffMs, verdictOf } from '../../internal/instructions/delivery/retry-policy.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const clock = (): Date => new Date('2026-03-01T10:00:00.000Z');

describe('instruction log', () => {
  it('a ring keeps the latest entries, oldest first', () => {
    const ring = new LogRing(3);
    assert.deepEqual(ring.entries(), []);
    for (let k = 1; k <= 7; k++) ring.push({ id: `i${k}`, lvl: 'info', tim: 't', msg: `m${k}` });
    assert.deepEqual(ring.entries().map((e) => e.id), ['i5', 'i6', 'i7']);
  });

  it('append publishes a `log` event on the bus with the time; a listening process keeps the latest `size`, once each', async () => {
    const bus = new LocalEventBus();
    const log = new InstructionLog(bus, { size: 3, now: clock });
    const seen: LocusEvent[] = [];
    bus.subscribe('r1', (m) => m.kind === 'events' && seen.push(...m.events));
    const held = log.listen('r1');
    for (let k = 1; k <= 5; k++) log.append('r1', { id: 'ins', lvl: k === 5 ? 'error' : 'warn', msg: `attempt ${k}` });
    log.append('r1', { id: 'ins', lvl: 'info', msg: 'given time', tim: '2026-01-01T00:00:00.000Z' });
    log.append('r2', { id: 'other', lvl: 'info', msg: 'elsewhere' });
    await turn();
    assert.equal(seen.length, 6);
    assert.deepEqual(seen[0], { kind: 'log', realm: 'r1', entry: { id: 'ins', lvl: 'warn', tim: '2026-03-01T10:00:00.000Z', msg: 'attempt 1' } });
    assert.deepEqual(log.recent('r1'), [
      { id: 'ins', lvl: 'warn', tim: '2026-03-01T10:00:00.000Z', msg: 'attempt 4' },
      { id: 'ins', lvl: 'error', tim: '2026-03-01T10:00:00.000Z', msg: 'attempt 5' },
      { id: 'ins', lvl: 'info', tim: '2026-01-01T00:00:00.000Z', msg: 'given time' },
    ]);
    assert.deepEqual(log.recent('r2'), [], 'nobody listens to r2 here');
    held.unsubscribe();
  });

  it('keeps what another process appends (heard on the bus), and lets a realm go with its last listener', async () => {
    const bus = new LocalEventBus();
    const holder = new InstructionLog(bus, { size: 10, now: clock });
    const elsewhere = new InstructionLog(bus, { size: 10, now: clock });
    const a = elsewhere.listen('r1');
    const b = elsewhere.listen('r1');
    holder.append('r1', { id: 'ins', lvl: 'error', msg: 'one' });
    await turn();
    assert.deepEqual(elsewhere.recent('r1').map((e) => e.msg), ['one']);
    a.unsubscribe();
    a.unsubscribe();
    holder.append('r1', { id: 'ins', lvl: 'error', msg: 'two' });
    await turn();
    assert.deepEqual(elsewhere.recent('r1').map((e) => e.msg), ['one', 'two'], 'still held by b');
    b.unsubscribe();
    assert.deepEqual(elsewhere.recent('r1'), []);
    holder.append('r1', { id: 'ins', lvl: 'error', msg: 'three' });
    await turn();
    assert.deepEqual(elsewhere.recent('r1'), []);
  });

  it('a deleted realm empties its ring; a long message is cut', async () => {
    const bus = new LocalEventBus();
    const log = new InstructionLog(bus, { size: 10, now: clock });
    log.listen('r1');
    log.append('r1', { id: 'ins', lvl: 'error', msg: 'x'.repeat(5000) });
    await turn();
    const [entry] = log.recent('r1');
    assert.equal(entry?.msg.length, maxLogMessage);
    assert.ok(entry?.msg.endsWith('x…'));
    bus.publishRealmDeleted('r1');
    await turn();
    assert.deepEqual(log.recent('r1'), []);
    log.close();
    log.append('r1', { id: 'ins', lvl: 'error', msg: 'after close' });
    await turn();
    assert.deepEqual(log.recent('r1'), []);
  });
});

describe('retry policy', () => {
  const answered = (status: number, extra: { retryAfterMs?: number; location?: string } = {}) =>
    verdictOf({ kind: 'answered', status, retryAfterMs: extra.retryAfterMs ?? null, location: extra.location ?? null });

  it('2xx delivers; 5xx, 429 and network errors retry; 3xx and other 4xx fail', () => {
    assert.deepEqual(answered(200), { kind: 'delivered' });
    assert.deepEqual(answered(204), { kind: 'delivered' });
    assert.deepEqual(answered(500), { kind: 'retry', reason: 'HTTP 500', notBeforeMs: 0 });
    assert.deepEqual(answered(429, { retryAfterMs: 3000 }), { kind: 'retry', reason: 'HTTP 429', notBeforeMs: 3000 });
    assert.deepEqual(verdictOf({ kind: 'unreachable', reason: 'connect ECONNREFUSED' }), { kind: 'retry', reason: 'connect ECONNREFUSED', notBeforeMs: 0 });
    assert.deepEqual(answered(404), { kind: 'failed', reason: 'HTTP 404' });
    assert.deepEqual(answered(301, { location: 'http://10.0.0.1/' }), { kind: 'failed', reason: 'HTTP 301: the redirect to http://10.0.0.1/ is not followed' });
    assert.deepEqual(answered(304), { kind: 'failed', reason: 'HTTP 304: the redirect is not followed' });
  });

  it('waits grow twice per retry, half of each at random, capped; Retry-After raises the wait up to the cap', () => {
    const b = { baseMs: 100, maxMs: 1000 };
    assert.equal(backoffMs(1, b, 0, () => 0), 50);
    assert.equal(backoffMs(1, b, 0, () => 1), 100);
    assert.equal(backoffMs(3, b, 0, () => 0), 200);
    assert.equal(backoffMs(3, b, 0, () => 1), 400);
    assert.equal(backoffMs(10, b, 0, () => 1), 1000);
    assert.equal(backoffMs(1, b, 700, () => 0), 700);
    assert.equal(backoffMs(1, b, 60_000, () => 0), 1000);
  });
});
