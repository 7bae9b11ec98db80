/**
 * The logs of a test run and the secrets it used, collected so that scripts/run-tests.mjs can
 * check, after every test file ran, that no token or Authorization header value appears in any
 * server log (issue #22; test/support/log-secrets.ts does the check).
 *
 * scripts/run-tests.mjs sets LOCUS_TEST_LOG_DIR to a fresh directory per run. There:
 * - `inprocess-<pid>.log`: the log of every server test support starts in this test process
 *   (startHarness), at level trace;
 * - `child-<pid>-<n>.stdout.log` / `.stderr.log`: a server process's output (spawnServer);
 * - `cluster-<pid>.log`: every line of every process of the test clusters (startTestCluster);
 * - `secrets-<pid>.txt`: every token and Authorization header value the tests used, one a line
 *   (recordSecret, called where test support creates tokens and sets headers).
 * Without LOCUS_TEST_LOG_DIR (a single test file run by hand, the benches) all of this is off.
 */
import { appendFileSync, closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type DestinationStream } from 'pino';

/** Shorter values are not secrets worth looking for (they would match by chance). */
export const MIN_SECRET_LENGTH = 8;

const dir = process.env.LOCUS_TEST_LOG_DIR === undefined || process.env.LOCUS_TEST_LOG_DIR === '' ? null : process.env.LOCUS_TEST_LOG_DIR;
const recorded = new Set<string>();

/** Where this run's logs go, or null when the run collects none. */
export function testLogDir(): string | null {
  return dir;
}

/** Records a token or Authorization header value (a leading `Bearer ` is dropped) the tests use. */
export function recordSecret(value: string | null | undefined): void {
  if (dir === null || value === null || value === undefined) return;
  const secret = value.startsWith('Bearer ') ? value.slice(7).trim() : value;
  if (secret.length < MIN_SECRET_LENGTH || recorded.has(secret) || /[\r\n]/.test(secret)) return;
  recorded.add(secret);
  appendFileSync(join(dir, `secrets-${process.pid}.txt`), `${secret}\n`);
}

let inProcess: (DestinationStream & { flushSync(): void }) | null | undefined;

/**
 * The log destination of servers started in this process (one file, opened on first use, written
 * asynchronously and flushed when the process exits), or undefined when the run collects no logs.
 */
export function inProcessLogDestination(): DestinationStream | undefined {
  if (dir === null) return undefined;
  if (inProcess === undefined) {
    const fd = openSync(join(dir, `inprocess-${process.pid}.log`), 'a');
    const destination = pino.destination({ fd, sync: false, minLength: 4096 });
    process.on('exit', () => destination.flushSync());
    inProcess = destination;
  }
  return inProcess ?? undefined;
}

/**
 * `sink` and, with a run's log directory, this process's in-process log too: for a test that
 * reads its server's log lines itself and should still have them checked at the end of the run.
 */
export function alsoToRunLog(sink: DestinationStream): DestinationStream {
  const run = inProcessLogDestination();
  if (run === undefined) return sink;
  return pino.multistream([
    { level: 'trace', stream: sink },
    { level: 'trace', stream: run },
  ]);
}

let children = 0;

/** Appends a child process's stdout and stderr to files of their own; a no-op without a log dir. */
export function captureChildOutput(child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }): void {
  if (dir === null) return;
  const base = join(dir, `child-${process.pid}-${++children}`);
  for (const [stream, suffix] of [[child.stdout, 'stdout'], [child.stderr, 'stderr']] as const) {
    if (stream === null) continue;
    const fd = openSync(`${base}.${suffix}.log`, 'a');
    stream.on('data', (chunk: Buffer) => writeSync(fd, chunk));
    stream.once('close', () => closeSync(fd));
  }
}

let clusterFd: number | null = null;

/** A line sink for cluster processes that appends `name | line` to this process's cluster log, or undefined without a log dir. */
export function clusterLogSink(): ((name: string, line: string) => void) | undefined {
  if (dir === null) return undefined;
  return (name, line) => {
    clusterFd ??= openSync(join(dir, `cluster-${process.pid}.log`), 'a');
    writeSync(clusterFd, `${name} | ${line}\n`);
  };
}
