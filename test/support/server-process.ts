/** A real `locus` server process (dist/cmd/server.js), for behaviour across processes. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the server logs that it listens; rejects if it exits first. */
  readonly listening: Promise<void>;
  /** Resolves when the process has exited, with what it wrote to stderr. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const serverJs = new URL('../../cmd/server.js', import.meta.url).pathname;

export interface SpawnOptions {
  cwd?: string;
  /** Runs the server as this user (and group of the same number); needs root. */
  uid?: number;
  /** Kills the server after this long (default 20 s). */
  killAfterMs?: number;
}

/** Starts the server with ephemeral ports, no demo realm, and `env` on top (an undefined value unsets). */
export function spawnServer(env: Record<string, string | undefined>, options: SpawnOptions = {}): ServerProcess {
  const child = spawn(process.execPath, [serverJs], {
    cwd: options.cwd,
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
    env: { ...process.env, LOCUS_HTTP_PORT: '0', LOCUS_TCP_PORT: '0', LOCUS_DEMO_REALM: 'false', LOCUS_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('locus listening')) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`server exited (${String(code ?? signal)}) before listening: ${stderr}`)));
  });
  // A test that only waits for `exited` must not fail on the rejection it does not await.
  listening.catch(() => undefined);
  // A server that should have refused to start but did not must fail its test, not hang it.
  const deadline = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 20_000);
  void exited.then(() => clearTimeout(deadline));
  if (child.pid === undefined) throw new Error('server process did not start');
  return { child, pid: child.pid, listening, exited };
}
