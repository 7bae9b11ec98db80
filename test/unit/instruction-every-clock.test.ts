/**
 * The `every` clock (instructions/engine/every-clock.ts): ticks aligned to the period from the
 * epoch, and after a stall (downtime, a blocked event loop) one tick, never the missed ones.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EveryClock, nextTickMs } from '../../internal/instructions/engine/every-clock.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(5);
}

describe('every clock', () => {
  it('the next tick is the next multiple of the period since the epoch, strictly after now', () => {
    const minute = 60_000;
    const t = Date.parse('2026-05-01T10:07:30.000Z');
    assert.equal(new Date(nextTickMs(t, minute)).toISOString(), '2026-05-01T10:08:00.000Z');
    assert.equal(new Date(nextTickMs(Date.parse('2026-05-01T10:08:00.000Z'), minute)).toISOString(), '2026-05-01T10:09:00.000Z');
    assert.equal(new Date(nextTickMs(t, 3_600_000)).toISOString(), '2026-05-01T11:00:00.000Z');
    assert.equal(new Date(nextTickMs(t, 86_400_000)).toISOString(), '2026-05-02T00:00:00.000Z');
  });

  it('ticks on the aligned instants', async () => {
    const ticks: number[] = [];
    const clock = new EveryClock(Date.now, 100, () => ticks.push(Date.now()));
    clock.start();
    await sleep(470);
    clock.stop();
    assert.ok(ticks.length >= 3 && ticks.length <= 5, `${ticks.length} ticks`);
    for (const at of ticks) assert.ok(at % 100 < 40, `tick at +${at % 100} ms past the period`);
    // Stopped: no more ticks.
    const count = ticks.length;
    await sleep(250);
    assert.equal(ticks.length, count);
  });

  it('after a stall of several periods, one tick, then the next aligned one: no catching up', async () => {
    const ticks: number[] = [];
    let stalled = false;
    const clock = new EveryClock(Date.now, 50, () => {
      ticks.push(Date.now());
      // The first tick blocks the event loop for eight periods (a stalled process).
      if (!stalled) {
        stalled = true;
        const until = Date.now() + 400;
        while (Date.now() < until);
      }
    });
    clock.start();
    await waitUntil(() => ticks.length >= 4, 2000);
    clock.stop();
    // Catching up would run the missed ticks back to back; here each comes on its own instant.
    const gaps = ticks.slice(1).map((at, k) => at - (ticks[k] as number));
    assert.ok((gaps[0] as number) >= 390, `the stall: ${gaps[0]} ms`);
    for (const gap of gaps.slice(1)) assert.ok(gap >= 10, `ticks ${gap} ms apart: ${JSON.stringify(gaps)}`);
  });
});
