/**
 * A real nats-server for tests: started on free ports (client and monitoring) on 127.0.0.1,
 * and stoppable, killable and restartable on the SAME ports (reconnect tests).
 * The binary comes from scripts/install-tools.sh (see tools.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { toolPath } from './tools.js';

export interface NatsServerOptions {
  /** Extra command-line arguments (e.g. `--cluster`, `--routes`, `-js`). */
  args?: string[];
  /** Milliseconds to wait for "Server is ready" (default 10 s). */
  readyTimeoutMs?: number;
}

export interface NatsServer {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The monitoring port (`-m`): /varz, /connz, /subsz. */
  readonly monitorPort: number;
  readonly monitorUrl: string;
  /** The running process's id (changes on restart). */
  pid(): number | undefined;
  /** True while the process runs. */
  running(): boolean;
  /** Everything the server logged (all runs). */
  log(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same ports (stops it first if it runs). */
  restart(): Promise<void>;
  /** GETs a monitoring endpoint, e.g. `/subsz?subs=1` or `/connz?subs=1`, as JSON. */
  monitor<T = unknown>(path: string): Promise<T>;
}

interface Run {
  child: ChildProcess;
  exited: Promise<void>;
}

const READY = /Server is ready/;
const CLIENT_PORT = /Listening for client connections on [^\s]*:(\d+)/;
const MONITOR_PORT = /Starting http monitor on [^\s]*:(\d+)/;

/** Starts a nats-server; `port`/`monitorPort` 0 picks free ones. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const binary = toolPath('nats-server');
  const extra = options.args ?? [];
  const timeoutMs = options.readyTimeoutMs ?? 10_000;
  let logText = '';
  let port = -1;
  let monitorPort = -1;
  let run: Run | null = null;

  const launch = async (): Promise<void> => {
    const args = ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), ...extra];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let own = '';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    run = { child, exited };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`nats-server not ready after ${timeoutMs} ms:\n${own}`));
      }, timeoutMs);
      const onData = (chunk: Buffer): void => {
        const text = chunk.toString();
        own += text;
        logText += text;
        if (READY.test(own)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited before it was ready (${String(child.exitCode ?? child.signalCode)}):\n${own}`));
      });
    });
    port = Number(CLIENT_PORT.exec(own)?.[1] ?? port);
    monitorPort = Number(MONITOR_PORT.exec(own)?.[1] ?? monitorPort);
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const current = run;
    if (current === null) return;
    run = null;
    if (current.child.exitCode === null && current.child.signalCode === null) current.child.kill(signal);
    await current.exited;
  };

  await launch();
  // A test that forgets to stop it must not keep the test process alive or leave it running.
  const onExit = (): void => {
    run?.child.kill('SIGKILL');
  };
  process.once('exit', onExit);

  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get monitorPort() {
      return monitorPort;
    },
    get monitorUrl() {
      return `http://127.0.0.1:${monitorPort}`;
    },
    pid: () => run?.child.pid,
    running: () => run !== null && run.child.exitCode === null && run.child.signalCode === null,
    log: () => logText,
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    async restart() {
      await halt('SIGTERM');
      await launch();
    },
    async monitor<T>(path: string): Promise<T> {
      const response = await fetch(`http://127.0.0.1:${monitorPort}${path}`);
      if (!response.ok) throw new Error(`nats-server monitor ${path}: HTTP ${response.status}`);
      return (await response.json()) as T;
    },
  };
}
