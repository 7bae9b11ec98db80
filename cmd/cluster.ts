/** `npm run cluster`: a cluster on one machine (internal/cluster/cluster.ts) until Ctrl-C or SIGTERM. */
import { runClusterCommand } from '../internal/cluster/cluster-command.js';

process.exitCode = await runClusterCommand(process.argv.slice(2));
