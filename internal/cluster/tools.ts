/**
 * The external programs a cluster runs (nats-server and haproxy), and the lookup of any tool
 * by name (the tests find theirs with it: test/support/tools.ts). scripts/install-tools.sh
 * puts them in `${LOCUS_TOOLS_DIR:-$HOME/.cache/locus-tools}/bin`; one found on the PATH (or
 * in /usr/sbin, where Debian puts haproxy) does too.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tools a cluster runs. */
export type Tool = 'nats-server' | 'haproxy';

export const clusterTools: readonly Tool[] = ['nats-server', 'haproxy'];

/** The script that installs the tools, from the package root. */
export const installScript = fileURLToPath(new URL('../../../scripts/install-tools.sh', import.meta.url));

export function toolsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.LOCUS_TOOLS_DIR ?? join(env.HOME ?? homedir(), '.cache', 'locus-tools');
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where a tool is looked for, in order. */
function toolDirs(env: NodeJS.ProcessEnv): string[] {
  return [join(toolsDir(env), 'bin'), ...(env.PATH ?? '').split(delimiter).filter((d) => d !== ''), '/usr/local/sbin', '/usr/sbin', '/sbin'];
}

/** Tool `name`'s path, or null when it is nowhere to be found. */
export function findTool(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of toolDirs(env)) {
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  return null;
}

export class MissingToolError extends Error {
  override readonly name = 'MissingToolError';
}

/** Where the tools were looked for, for messages. */
function lookedIn(env: NodeJS.ProcessEnv): string {
  return `looked in ${join(toolsDir(env), 'bin')}, the PATH and /usr/sbin`;
}

/** Tool `name`'s path; throws a MissingToolError naming it and the command that installs it. */
export function requireTool(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const path = findTool(name, env);
  if (path === null) throw new MissingToolError(`${name} not found (${lookedIn(env)}); install with: bash scripts/install-tools.sh`);
  return path;
}

/** Every cluster tool's path; throws naming the missing ones and the command that installs them. */
export function requireTools(env: NodeJS.ProcessEnv = process.env): Record<Tool, string> {
  const found = {} as Record<Tool, string>;
  const missing: Tool[] = [];
  for (const tool of clusterTools) {
    const path = findTool(tool, env);
    if (path === null) missing.push(tool);
    else found[tool] = path;
  }
  if (missing.length > 0) {
    throw new MissingToolError(
      `${missing.join(' and ')} not found (${lookedIn(env)}); install with: bash scripts/install-tools.sh`,
    );
  }
  return found;
}

/**
 * Every tool's path, running scripts/install-tools.sh first (output to this process's stderr)
 * when one is missing.
 */
export function ensureTools(env: NodeJS.ProcessEnv = process.env): Record<Tool, string> {
  try {
    return requireTools(env);
  } catch (err) {
    if (!(err instanceof MissingToolError)) throw err;
    process.stderr.write(`${err.message.split(';')[0] ?? err.message}; running ${installScript}\n`);
    const run = spawnSync('bash', [installScript], { stdio: ['ignore', process.stderr, 'inherit'], env });
    if (run.status !== 0) {
      throw new MissingToolError(`scripts/install-tools.sh failed (exit ${String(run.status ?? run.signal)}); see its output above`);
    }
    return requireTools(env);
  }
}
