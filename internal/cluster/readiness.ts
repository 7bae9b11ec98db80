/** Waiting for a started process to serve: a TCP port that accepts, an HTTP URL that answers 200. */
import { connect } from 'node:net';
import type { ManagedProcess } from './managed-process.js';

const POLL_MS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Polls `ready` until it holds; fails when `proc` exits first or after `timeoutMs`, with the process's last output. */
export async function waitUntil(ready: () => Promise<boolean>, proc: ManagedProcess | null, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (proc !== null && !proc.running) {
      throw new Error(`${proc.name} exited before ${what}; its last output:\n${proc.recentOutput()}`);
    }
    if (Date.now() > deadline) {
      const output = proc === null ? '' : `; ${proc.name}'s last output:\n${proc.recentOutput()}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${output}`);
    }
    await sleep(POLL_MS);
  }
}

export function waitForPort(host: string, port: number, proc: ManagedProcess | null, timeoutMs = 10_000): Promise<void> {
  return waitUntil(() => accepts(host, port), proc, `${host}:${port} to accept connections`, timeoutMs);
}

export function waitForHttpOk(url: string, proc: ManagedProcess | null, timeoutMs = 15_000): Promise<void> {
  return waitUntil(() => httpOk(url), proc, `${url} to answer 200`, timeoutMs);
}
