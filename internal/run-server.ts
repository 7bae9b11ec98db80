/** Runs the server until SIGTERM or SIGINT, then shuts down gracefully. */
import { ConfigError, loadConfig } from './config/config.js';
import { start } from './server.js';

export async function runServer(argv: readonly string[]): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`locus: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  let server;
  try {
    server = await start(config);
  } catch (err) {
    // A store in use or a missing store directory: one line, not a stack trace.
    if (err instanceof ConfigError) {
      console.error(`locus: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  if (server.demoToken !== null) {
    process.stdout.write(
      [
        '',
        'Created realm "demo". Its write token (shown only this once):',
        `  ${server.demoToken.token}`,
        'Try:',
        `  curl -X PUT -H 'Authorization: Bearer ${server.demoToken.token}' -H 'Content-Type: application/json' \\`,
        `    -d '{"label":"Truck 1","location":{"longitude":13.4,"latitude":52.5}}' ${server.httpUrl}/v2/realm/demo/object/truck%2F1`,
        '',
      ].join('\n') + '\n',
    );
  }
  const stop = (signal: string): void => {
    process.stdout.write(`received ${signal}, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('shutdown failed', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
