/**
 * The Kubernetes operator as a real process (`node dist/cmd/operator.js`) for the operator's
 * end-to-end tests: its output kept, its HTTP port chosen free, stoppable by SIGTERM or SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './kube-apiserver.js';
import { captureChildOutput } from './test-logs.js';

const operatorScript = fileURLToPath(new URL('../../cmd/operator.js', import.meta.url));

export interface OperatorProcess {
  readonly identity: string;
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** GET on its HTTP port: status and text (0 when it does not answer). */
  get(path: string): Promise<{ status: number; text: string }>;
  /** The value of a metric line without labels (`name value`), or null. */
  metric(name: string): Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startOperatorProcess(identity: string, env: Record<string, string>): Promise<OperatorProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [operatorScript], {
    env: {
      PATH: process.env.PATH ?? '',
      LOCUS_OPERATOR_HOST: '127.0.0.1',
      LOCUS_OPERATOR_PORT: String(port),
      LOCUS_OPERATOR_IDENTITY: identity,
      LOCUS_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Into the run's log directory too: the run's check finds any token there (test-logs.ts).
  captureChildOutput(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const onExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  void exited.then(() => process.off('exit', onExit));
  const url = `http://127.0.0.1:${port}`;
  const get = async (path: string): Promise<{ status: number; text: string }> => {
    try {
      const res = await fetch(url + path, { signal: AbortSignal.timeout(3000) });
      return { status: res.status, text: await res.text() };
    } catch {
      return { status: 0, text: '' };
    }
  };
  const proc: OperatorProcess = {
    identity,
    url,
    child,
    output: () => out,
    exited,
    get,
    async metric(name) {
      const { status, text } = await get('/metrics');
      if (status !== 200) return null;
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? null : Number(line.slice(name.length + 1));
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  // Up once /healthz answers (or it exited).
  const deadline = Date.now() + 20_000;
  for (;;) {
    if ((await get('/healthz')).status === 200) return proc;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the operator exited before serving /healthz:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the operator did not serve /healthz within 20 s:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
