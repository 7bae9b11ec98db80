/**
 * A child process of the cluster launcher: started, stopped and restarted by name, its output
 * cut into lines and handed to a sink with the process's name, the last lines kept for error
 * messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ProcessSpec {
  /** The name in logs: `nats`, `api-1`, `haproxy`. */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Receives each output line of each process (stdout and stderr alike). */
export type LineSink = (name: string, line: string) => void;

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const KEPT_LINES = 200;

export class ManagedProcess {
  private child: ChildProcess | null = null;
  /** The current run has ended (exited, or could not start at all). */
  private ended = true;
  private exit: Promise<ProcessExit> = Promise.resolve({ code: null, signal: null });
  private readonly lines: string[] = [];

  constructor(
    readonly spec: ProcessSpec,
    private readonly sink: LineSink,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  get running(): boolean {
    return !this.ended;
  }

  get pid(): number | null {
    return this.running ? (this.child?.pid ?? null) : null;
  }

  /** Resolves when the current run ends (at once when none runs). */
  get exited(): Promise<ProcessExit> {
    return this.exit;
  }

  /** The last output lines, for an error message. */
  recentOutput(): string {
    return this.lines.join('\n');
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const child = spawn(this.spec.command, [...this.spec.args], {
      env: this.spec.env,
      cwd: this.spec.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C in a terminal reaches the launcher only, which then
      // stops each process in order (a second SIGINT would end an API process at once).
      detached: true,
    });
    this.child = child;
    this.ended = false;
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.ended = true;
        this.keep(`(exited: ${code === null ? String(signal) : `code ${code}`})`);
        resolve({ code, signal });
      });
      // A command that cannot be run at all (ENOENT) ends without an exit event.
      child.once('error', (err) => {
        if (this.ended) return;
        this.ended = true;
        this.keep(`(could not run ${this.spec.command}: ${err.message})`);
        resolve({ code: null, signal: null });
      });
    });
    this.pipe(child.stdout);
    this.pipe(child.stderr);
  }

  /** Sends `signal` and resolves when the process has ended. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<ProcessExit> {
    if (this.running) this.child?.kill(signal);
    return this.exit;
  }

  /** SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
  async stop(graceMs = 5000): Promise<ProcessExit> {
    if (!this.running) return this.exit;
    this.child?.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (this.running) this.child?.kill('SIGKILL');
    }, graceMs);
    try {
      return await this.exit;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills at once, without waiting (for a process `exit` handler). */
  killNow(): void {
    if (this.running) this.child?.kill('SIGKILL');
  }

  private pipe(stream: NodeJS.ReadableStream | null): void {
    if (stream === null) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      partial += chunk;
      for (let at = partial.indexOf('\n'); at !== -1; at = partial.indexOf('\n')) {
        this.keep(partial.slice(0, at));
        partial = partial.slice(at + 1);
      }
    });
    stream.on('end', () => {
      if (partial !== '') this.keep(partial);
      partial = '';
    });
  }

  private keep(line: string): void {
    this.lines.push(line);
    if (this.lines.length > KEPT_LINES) this.lines.shift();
    this.sink(this.name, line);
  }
}
