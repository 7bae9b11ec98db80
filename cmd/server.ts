/** The API process: `npm start` / `locus serve`. `--help` (or `-h`) prints its settings and starts nothing. */
import { asksForHelp, serveHelp } from '../internal/cli/cli-help.js';
import { runServer } from '../internal/run-server.js';

const argv = process.argv.slice(2);
if (asksForHelp(argv)) process.stdout.write(serveHelp('node dist/cmd/server.js') + '\n');
else await runServer(argv);
