/** The server as a separate process (`node dist/cmd/server.js`), for what is about the process: signals, exit codes, output, store ownership. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { captureChildOutput } from './test-logs.js';

const serverScript = fileURLToPath(new URL('../../cmd/server.js', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Milliseconds from `since` (start, or the last markTime) to the exit. */
  afterMs: number;
  /** Everything the process wrote to stderr. */
  stderr: string;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  dir: string;
  stdout(): string;
  stderr(): string;
  /** Every stdout line parsed; throws on a line that is not JSON. */
  logLines(): Record<string, unknown>[];
  /** Waits for a JSON log line with this `msg`. */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once the server logs that it listens; rejects if it exits first. */
  listening: Promise<void>;
  /** Resolves with the exit; times are counted from the last markTime(). */
  exited: Promise<Exit>;
  markTime(): void;
  cleanup(): void;
}

export interface SpawnOptions {
  cwd?: string;
  /** Runs the server as this user (and group of the same number); needs root. */
  uid?: number;
  /** Kills the server after this long (default 20 s): one that should have refused to start fails its test instead of hanging it. */
  killAfterMs?: number;
}

/**
 * Starts the server on a store in a fresh temporary directory, with ephemeral ports, no
 * demo realm, and `env` on top (an undefined value unsets the variable).
 */
export function spawnServer(env: Record<string, string | undefined> = {}, options: SpawnOptions = {}): ServerProcess {
  const dir = mkdtempSync(join(tmpdir(), 'locus-proc-'));
  const child = spawn(process.execPath, [serverScript], {
    cwd: options.cwd,
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    env: {
      PATH: process.env.PATH ?? '',
      LOCUS_STORE: `sqlite:${join(dir, 'x.db')}`,
      LOCUS_HOST: '127.0.0.1',
      LOCUS_HTTP_PORT: '0',
      LOCUS_TCP_PORT: '0',
      LOCUS_DEMO_REALM: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('server process did not start');
  captureChildOutput(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  let since = Date.now();
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, afterMs: Date.now() - since, stderr: err }));
  });
  const deadline = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 20_000);
  void exited.then(() => clearTimeout(deadline));
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => {
      if (out.includes('locus listening')) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`server exited (${String(code ?? signal)}) before listening: ${err}`)));
  });
  // A test that only waits for `exited` must not fail on the rejection it does not await.
  listening.catch(() => undefined);
  const logLines = (): Record<string, unknown>[] =>
    out
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          throw new Error(`stdout line is not JSON: ${line}`);
        }
      });
  const proc: ServerProcess = {
    child,
    pid: child.pid,
    dir,
    stdout: () => out,
    stderr: () => err,
    logLines,
    listening,
    exited,
    markTime: () => {
      since = Date.now();
    },
    async waitForLog(msg, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = logLines().find((line) => line.msg === msg);
        if (found !== undefined) return found;
        if (Date.now() > until || child.exitCode !== null) {
          throw new Error(`no log line "${msg}" (exit ${child.exitCode}); stdout:\n${out}\nstderr:\n${err}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    cleanup: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return proc;
}

/** The listening line's HTTP port and TCP port. */
export async function listening(proc: ServerProcess): Promise<{ httpUrl: string; httpPort: number; tcpPort: number }> {
  const line = await proc.waitForLog('locus listening');
  const httpUrl = String(line.httpUrl);
  return { httpUrl, httpPort: Number(new URL(httpUrl).port), tcpPort: Number(line.tcpPort) };
}
