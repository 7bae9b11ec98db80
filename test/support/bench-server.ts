/**
 * The server of a benchmark: a child process started as `npm start` starts it
 * (SERVER_NODE_OPTIONS), over an SQLite file in a temporary directory, on loopback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_NODE_OPTIONS } from '../../internal/runtime/node-options.js';

/** The admin token the benches start their servers with. */
export const benchAdminToken = 'bench-admin-token-0123456789';

export interface BenchServer {
  child: ChildProcess;
  httpUrl: string;
  tcpPort: number;
  dir: string;
}

export interface BenchServerOptions {
  adminToken: string;
  /** More environment variables (LOCUS_*) of the server. */
  env?: Record<string, string>;
  /** More Node.js options of the server's command line. */
  args?: readonly string[];
  /** A file that gets the server's output once it listens; dropped otherwise. */
  out?: string | undefined;
}

export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'locus-bench-'));
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, ...(options.args ?? []), 'dist/cmd/server.js'], {
    env: {
      ...process.env,
      LOCUS_HOST: '127.0.0.1',
      LOCUS_HTTP_PORT: '0',
      LOCUS_TCP_PORT: '0',
      LOCUS_STORE: `sqlite:${join(dir, 'locus.db')}`,
      LOCUS_ADMIN_TOKEN: options.adminToken,
      LOCUS_DEMO_REALM: 'false',
      LOCUS_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const address = await new Promise<{ httpUrl: string; tcpPort: number }>((resolve, reject) => {
    let buffered: string | null = '';
    const timer = setTimeout(() => reject(new Error('the server did not start within 10 s')), 10_000);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      // Once the server listens, its output (e.g. --trace-gc's) goes to `out` or nowhere.
      if (buffered === null) return;
      buffered += chunk;
      for (const line of buffered.split('\n')) {
        if (!line.includes('locus listening')) continue;
        const entry = JSON.parse(line) as { httpUrl: string; tcpPort: number };
        buffered = null;
        clearTimeout(timer);
        resolve({ httpUrl: entry.httpUrl, tcpPort: entry.tcpPort });
        break;
      }
    });
  });
  if (options.out !== undefined && options.out !== '') child.stdout?.pipe(createWriteStream(options.out));
  else child.stdout?.resume();
  return { child, dir, ...address };
}

export async function stopBenchServer(server: BenchServer): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
  rmSync(server.dir, { recursive: true, force: true });
}
