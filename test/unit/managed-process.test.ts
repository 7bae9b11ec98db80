/** The cluster launcher's child processes: output lines named, exits seen, a command that cannot run reported. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManagedProcess } from '../../internal/cluster/managed-process.js';

describe('ManagedProcess', () => {
  it('hands each output line to the sink with its name, and keeps the last ones', async () => {
    const lines: string[] = [];
    const proc = new ManagedProcess(
      { name: 'echo', command: process.execPath, args: ['-e', 'console.log("one\\ntwo"); console.error("three")'], env: process.env },
      (name, line) => lines.push(`${name}: ${line}`),
    );
    proc.start();
    assert.equal(proc.running, true);
    assert.deepEqual(await proc.exited, { code: 0, signal: null });
    assert.equal(proc.running, false);
    assert.deepEqual(lines.filter((l) => !l.includes('three')).slice(0, 2), ['echo: one', 'echo: two']);
    assert.ok(lines.includes('echo: three'));
    assert.match(proc.recentOutput(), /one\ntwo/);
    assert.match(proc.recentOutput(), /\(exited: code 0\)$/);
  });

  it('stops with SIGTERM, and SIGKILL when the process ignores it', async () => {
    const proc = new ManagedProcess(
      { name: 'stubborn', command: process.execPath, args: ['-e', 'process.on("SIGTERM", () => {}); console.log("up"); setInterval(() => {}, 1000)'], env: process.env },
      () => undefined,
    );
    proc.start();
    while (!proc.recentOutput().includes('up')) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await proc.stop(300), { code: null, signal: 'SIGKILL' });
    assert.equal(proc.running, false);
  });

  it('reports a command that cannot run as ended, not as running', async () => {
    const proc = new ManagedProcess({ name: 'missing', command: '/nonexistent/tool', args: [], env: process.env }, () => undefined);
    proc.start();
    await proc.exited;
    assert.equal(proc.running, false);
    assert.match(proc.recentOutput(), /could not run \/nonexistent\/tool/);
  });
});
