/**
 * The external programs a cluster runs: nats-server and haproxy. scripts/install-tools.sh puts
 * them in `${LOCUS_TOOLS_DIR:-$HOME/.cache/locus-tools}/bin`; one found on the PATH (or in
 * /usr/sbin, where Debian puts haproxy) does too.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** The tool's path, or null when it is nowhere to be found. */
export function findTool(name: Tool, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [join(toolsDir(env), 'bin'), ...(env.PATH ?? '').split(delimiter).filter((d) => d !== ''), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  return null;
}

export class MissingToolError extends Error {
  override readonly name = 'MissingToolError';
}

/** Every tool's path; throws naming the missing ones and the command that installs them. */
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
      `${missing.join(' and ')} not found (looked in ${join(toolsDir(env), 'bin')}, the PATH and /usr/sbin); ` +
        `install with: bash scripts/install-tools.sh`,
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
