/** The signal handling of lifecycle/signal-shutdown.ts, with its exit and watchdog replaced. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { signalShutdown, WATCHDOG_GRACE_MS } from '../../internal/lifecycle/signal-shutdown.js';
import { createLogger } from '../../internal/observability/logger.js';

function harness(close: () => Promise<void>, timeoutMs: number) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const exits: number[] = [];
  const watchdogs: { afterMs: number; line: string; disarmed: boolean }[] = [];
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const onSignal = signalShutdown({
    logger: createLogger('info', sink),
    timeoutMs,
    close,
    exit: (code) => {
      exits.push(code);
      exited(code);
    },
    watchdog: (afterMs, line) => {
      const dog = { afterMs, line, disarmed: false };
      watchdogs.push(dog);
      return { disarm: () => (dog.disarmed = true) };
    },
  });
  return { lines, exits, watchdogs, exit, onSignal };
}

describe('signal shutdown', () => {
  it('exits 0 once the graceful close is done, and disarms the watchdog', async () => {
    const h = harness(() => Promise.resolve(), 5000);
    h.onSignal('SIGTERM');
    assert.equal(await h.exit, 0);
    assert.equal(h.watchdogs[0]?.disarmed, true);
    assert.equal(h.watchdogs[0]?.afterMs, 5000 + WATCHDOG_GRACE_MS);
    assert.deepEqual(h.lines.map((l) => l.msg), ['shutting down']);
  });

  it('exits 1 with a JSON line at the deadline when the close never ends', async () => {
    const h = harness(() => new Promise<void>(() => undefined), 100);
    const started = Date.now();
    h.onSignal('SIGINT');
    assert.equal(await h.exit, 1);
    assert.ok(Date.now() - started < 1000);
    const last = h.lines.at(-1);
    assert.equal(last?.level, 50);
    assert.equal(last?.msg, 'shutdown did not finish within LOCUS_SHUTDOWN_TIMEOUT_MS; exiting');
    // The watchdog's own line is JSON too.
    assert.equal((JSON.parse(h.watchdogs[0]?.line ?? '') as { level: number }).level, 60);
  });

  it('exits 1 when the close fails, logging why', async () => {
    const h = harness(() => Promise.reject(new Error('disk gone')), 5000);
    h.onSignal('SIGTERM');
    assert.equal(await h.exit, 1);
    assert.equal(h.lines.at(-1)?.msg, 'shutdown failed');
  });

  it('exits at once on a second signal: 143 after SIGTERM, 130 after SIGINT', () => {
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const h = harness(() => new Promise<void>(() => undefined), 60_000);
      h.onSignal('SIGTERM');
      h.onSignal(signal);
      assert.deepEqual(h.exits, [code]);
      assert.equal(h.lines.at(-1)?.msg, 'second signal: exiting at once');
    }
  });
});
