/**
 * The servers of the peers bench as child processes: free loopback ports, finding a binary,
 * and what a server (with every process it started) uses of the machine, read from /proc.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/** A loopback port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `name` as given when it holds a slash, else the first match on PATH; null when absent. */
export function findBinary(name: string): string | null {
  if (name.includes('/')) return existsSync(name) ? name : null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir, name);
    if (dir !== '' && existsSync(path)) return path;
  }
  return null;
}

/** Runs `command` to its end; rejects with its output when it fails. */
export function runToEnd(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} exited with ${code}: ${output.slice(-2000)}`))));
  });
}

/** Retries `attempt` until it resolves, every 100 ms, for at most `timeoutMs`. */
export async function retryUntil<T>(what: string, timeoutMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Signals the child and waits for it to exit (killed after `graceMs`). */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** `pid` and every process below it (PostgreSQL's backends; a single process elsewhere). */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const children = parents.get(ppid) ?? [];
      children.push(Number(entry));
      parents.set(ppid, children);
    } catch {
      // The process ended while the list was read.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i] as number) ?? []));
  return tree;
}

/** CPU time (user + system, ms, in clock ticks of 10 ms) of `pid` and the processes below it now. */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const member of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${member}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Ended meanwhile: its time is gone from the sum (a backend that closed).
    }
  }
  return ticks * 10;
}

export interface TreeMemory {
  /** Resident set of the root process (MiB). */
  rssMiB: number;
  /**
   * For a server of many processes (PostgreSQL), what they hold together (MiB): their private
   * resident memory summed (RssAnon), plus the shared memory resident in the process that maps
   * the most of it (RssShmem: the shared buffers, which every process maps but only in part).
   */
  treeMiB: number;
  processes: number;
}

/** A field of /proc/<pid>/status in kB; 0 when the process ended meanwhile. */
function statusKiB(pid: number, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

export function treeMemory(pid: number): TreeMemory {
  const tree = processTree(pid);
  const anonKiB = tree.reduce((sum, member) => sum + statusKiB(member, 'RssAnon'), 0);
  const shmemKiB = Math.max(...tree.map((member) => statusKiB(member, 'RssShmem')));
  return { rssMiB: statusKiB(pid, 'VmRSS') / 1024, treeMiB: (anonKiB + shmemKiB) / 1024, processes: tree.length };
}
