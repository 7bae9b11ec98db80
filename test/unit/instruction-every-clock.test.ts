/**
 * The `every` clock (instructions/engine/every-clock.ts): ticks aligned to the period from the
 * epoch, and after a stall (downtime, a blocked event loop) one tick, never the missed ones.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EveryClock, nextTickMs } from '../../internal/instructions/engine/every-clock.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
    const clock = new EveryClock(Date.now, 50, () => ticks.push(Date.now()));
    clock.start();
    await sleep(60);
    const before = ticks.length;
    // Block the event loop for eight periods.
    const until = Date.now() + 400;
    while (Date.now() < until);
    await sleep(120);
    clock.stop();
    const after = ticks.slice(before);
    // The late tick runs at once; catching up would run eight more right after it.
    const atOnce = after.filter((at) => at <= until + 25).length;
    assert.ok(atOnce >= 1 && atOnce <= 2, `${atOnce} ticks right after the stall`);
    assert.ok(after.length <= 5, `${after.length} ticks after the stall`);
  });
});
