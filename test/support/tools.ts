/**
 * Finds the external tools the tests run against (nats-server, haproxy, ...), installed by
 * `bash scripts/install-tools.sh` into `$LOCUS_TOOLS_DIR/bin` (default `~/.cache/locus-tools/bin`),
 * or else on PATH (or in /usr/sbin). The lookup is the product's (internal/cluster/tools.ts):
 * `toolPath(name)` is its path, or a clear error naming the install command when it is missing.
 */
import { join } from 'node:path';
import { requireTool, toolsDir } from '../../internal/cluster/tools.js';

export { findTool, requireTool as toolPath } from '../../internal/cluster/tools.js';

/** The directory install-tools.sh installs into. */
export function toolsBinDir(): string {
  return join(toolsDir(), 'bin');
}

/** promtool (checks and unit-tests deploy/prometheus, parses the dashboards' queries); throws naming the install command when missing. */
export function findPromtool(): string {
  return requireTool('promtool');
}
