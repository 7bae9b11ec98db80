/**
 * Finds the external tools the tests run against (nats-server, haproxy, ...), installed by
 * `bash scripts/install-tools.sh` into `$LOCUS_TOOLS_DIR/bin` (default `~/.cache/locus-tools/bin`),
 * or else on PATH.
 */
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The directory install-tools.sh installs into. */
export function toolsBinDir(): string {
  const base = process.env.LOCUS_TOOLS_DIR ?? join(homedir(), '.cache', 'locus-tools');
  return join(base, 'bin');
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of tool `name`: the tools directory first, then PATH; throws a clear error when it is missing. */
export function toolPath(name: string): string {
  const dirs = [toolsBinDir(), ...(process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '')];
  for (const dir of dirs) {
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  throw new Error(
    `${name} is not installed (looked in ${toolsBinDir()} and on PATH): run bash scripts/install-tools.sh`,
  );
}

/** promtool (checks and unit-tests deploy/prometheus, parses the dashboards' queries); throws naming the install command when missing. */
export function findPromtool(): string {
  return toolPath('promtool');
}
