/** The operator's work queue and backoff (internal/operator/work-queue.ts, backoff.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay } from '../../internal/operator/backoff.js';
import { WorkQueue, type Scheduler } from '../../internal/operator/work-queue.js';

/** A scheduler whose time moves only when the test says so. */
function manualScheduler(): Scheduler & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let next = 0;
  return {
    now: () => now,
    schedule(fn, ms) {
      const id = next++;
      timers.push({ at: now + ms, fn, id });
      return () => {
        timers = timers.filter((t) => t.id !== id);
      };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
    pending: () => timers.length,
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await tick();
}

void describe('backoffDelay', () => {
  const policy = { baseMs: 100, capMs: 1000 };
  void it('doubles per failure within [d/2, d] and stops at the cap', () => {
    assert.equal(backoffDelay(1, policy, () => 1), 100);
    assert.equal(backoffDelay(1, policy, () => 0), 50);
    assert.equal(backoffDelay(2, policy, () => 1), 200);
    assert.equal(backoffDelay(3, policy, () => 0.5), 300);
    assert.equal(backoffDelay(4, policy, () => 1), 800);
    assert.equal(backoffDelay(5, policy, () => 1), 1000);
    assert.equal(backoffDelay(500, policy, () => 0), 500);
  });
  void it('spreads retries (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(3, policy)));
    assert.ok(delays.size > 5);
    for (const d of delays) assert.ok(d >= 200 && d <= 400, String(d));
  });
});

void describe('WorkQueue', () => {
  void it('dedups a key waiting in the queue', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = new WorkQueue(async (key) => {
      seen.push(key);
      if (key === 'block') await gate;
    }, { workers: 1, scheduler: manualScheduler() });
    queue.add('block');
    await settle();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    queue.add('a');
    assert.equal(queue.depth(), 2);
    release();
    await settle();
    assert.deepEqual(seen, ['block', 'a', 'b']);
    await queue.close();
  });

  void it('never gives one key to two workers at once, and processes a key added meanwhile again afterwards', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const releases: (() => void)[] = [];
    const queue = new WorkQueue(async () => {
      calls++;
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
    }, { workers: 4, scheduler: manualScheduler() });
    queue.add('k');
    await settle();
    queue.add('k');
    queue.add('k');
    await settle();
    assert.equal(calls, 1, 'the second add waits for the first to finish');
    releases.shift()?.();
    await settle();
    assert.equal(calls, 2, 'added while held: processed once more');
    releases.shift()?.();
    await settle();
    assert.equal(calls, 2);
    assert.equal(most, 1);
    await queue.close();
  });

  void it('runs different keys in parallel up to the number of workers', async () => {
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const queue = new WorkQueue(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
    }, { workers: 3, scheduler: manualScheduler() });
    for (const key of ['a', 'b', 'c', 'd', 'e']) queue.add(key);
    await settle();
    assert.equal(running, 3);
    assert.equal(queue.depth(), 2);
    while (releases.length > 0) {
      releases.shift()?.();
      await settle();
    }
    assert.equal(most, 3);
    await queue.close();
  });

  void it('retries a failing key with growing backoff and forgets its failures after a success', async () => {
    const scheduler = manualScheduler();
    let attempts = 0;
    const retries: number[] = [];
    const queue = new WorkQueue(() => {
      attempts++;
      return attempts <= 3 ? Promise.reject(new Error('store down')) : Promise.resolve();
    }, {
      workers: 1,
      scheduler,
      backoff: { baseMs: 100, capMs: 10_000 },
      random: () => 1,
      hooks: { processed: (_key, outcome) => (outcome.ok ? undefined : retries.push(outcome.retryInMs)) },
    });
    queue.add('r');
    await settle();
    assert.equal(attempts, 1);
    assert.equal(queue.failuresOf('r'), 1);
    scheduler.advance(99);
    await settle();
    assert.equal(attempts, 1, 'not before the backoff');
    scheduler.advance(1);
    await settle();
    assert.equal(attempts, 2);
    scheduler.advance(200);
    await settle();
    assert.equal(attempts, 3);
    scheduler.advance(400);
    await settle();
    assert.equal(attempts, 4);
    assert.deepEqual(retries, [100, 200, 400]);
    assert.equal(queue.failuresOf('r'), 0);
    await queue.close();
  });

  void it('requeues after the delay a success asks for; the earliest of two delayed adds wins', async () => {
    const scheduler = manualScheduler();
    let calls = 0;
    const queue = new WorkQueue(() => {
      calls++;
      return Promise.resolve(calls === 1 ? { requeueAfterMs: 1000 } : {});
    }, { workers: 1, scheduler });
    queue.add('t');
    await settle();
    queue.addAfter('t', 5000);
    assert.equal(scheduler.pending(), 1, 'the later add is dropped');
    scheduler.advance(1000);
    await settle();
    assert.equal(calls, 2);
    await queue.close();
  });

  void it('close waits for running work and drops the rest', async () => {
    const scheduler = manualScheduler();
    let finished = 0;
    let release!: () => void;
    const queue = new WorkQueue(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished++;
    }, { workers: 1, scheduler });
    queue.add('a');
    queue.add('b');
    queue.addAfter('c', 100);
    await settle();
    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    await settle();
    assert.equal(closed, false, 'waits for the running key');
    release();
    await closing;
    assert.equal(finished, 1);
    assert.equal(queue.depth(), 0);
    assert.equal(scheduler.pending(), 0);
    queue.add('d');
    assert.equal(queue.depth(), 0, 'a closed queue takes nothing');
  });

  void it('refuses zero workers', () => {
    assert.throws(() => new WorkQueue(() => Promise.resolve(), { workers: 0 }), /at least one worker/);
  });
});
