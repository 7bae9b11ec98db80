/** The API process: `npm start` / `locus serve`. */
import { runServer } from '../internal/run-server.js';

await runServer(process.argv.slice(2));
