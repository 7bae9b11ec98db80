/** The shutdown watchdog kills a process whose main thread is stuck in synchronous work. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';

const watchdogModule = new URL('../../internal/lifecycle/shutdown-watchdog.js', import.meta.url).href;

describe('shutdown watchdog', () => {
  it('writes its JSON line and kills the process while the event loop is blocked', async () => {
    const script = `
      const { armWatchdog } = await import(${JSON.stringify(watchdogModule)});
      armWatchdog(200, JSON.stringify({ level: 60, msg: 'watchdog fired' }));
      for (;;) {}
    `;
    const started = Date.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    clearTimeout(timer);
    assert.equal(signal, 'SIGKILL');
    assert.ok(Date.now() - started < 5000);
    assert.deepEqual(JSON.parse(out.trim()), { level: 60, msg: 'watchdog fired' });
  });

  it('lets a process that is done exit normally', async () => {
    const script = `
      const { armWatchdog } = await import(${JSON.stringify(watchdogModule)});
      armWatchdog(60_000, '{}');
    `;
    const started = Date.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 0);
    assert.ok(Date.now() - started < 5000);
  });
});
