/**
 * Runs the server until SIGTERM or SIGINT (lifecycle/signal-shutdown.ts). Start-up
 * failures end the process with code 1: a configuration problem (a bad value, a busy
 * port, an unusable store path) as one `locus: ...` line on stderr naming the setting,
 * anything else as one JSON log line.
 */
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { installSignalShutdown } from './lifecycle/signal-shutdown.js';
import { createLogger } from './observability/logger.js';
import { start, type RunningServer } from './server.js';

function failStart(err: unknown, logger: Logger): never {
  if (err instanceof ConfigError) process.stderr.write(`locus: ${err.message}\n`);
  else logger.fatal({ err }, 'start-up failed');
  process.exit(1);
}

/**
 * The demo realm's token goes to stderr as text for the person at the terminal, never into
 * the JSON log on stdout (log pipelines keep and ship it); the log only says it happened.
 */
function announceDemo(server: RunningServer, logger: Logger): void {
  const demo = server.demoToken;
  if (demo === null) return;
  logger.info({ realm: 'demo', tokenId: demo.id }, 'created realm demo; its write token is printed once on stderr');
  process.stderr.write(
    [
      '',
      'Created realm "demo". Its write token (shown only this once):',
      `  ${demo.token}`,
      'Try:',
      `  curl -X POST -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\`,
      `    -d '{"label":"Truck 1","location":{"longitude":13.4,"latitude":52.5}}' ${server.httpUrl}/v2/realm/demo/object/truck%2F1`,
      '',
    ].join('\n') + '\n',
  );
}

export async function runServer(argv: readonly string[]): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, argv);
  } catch (err) {
    failStart(err, createLogger('info'));
  }
  const logger = createLogger(config.logLevel);
  const starting = start(config, { logger });
  // Before the server listens: a signal that comes as soon as it does (a supervisor's
  // prompt stop) must find the handler, not Node's default, which ends the process at once.
  installSignalShutdown({ logger, timeoutMs: config.shutdownTimeoutMs, close: async () => (await starting).close() });
  let server: RunningServer;
  try {
    server = await starting;
  } catch (err) {
    failStart(err, logger);
  }
  announceDemo(server, logger);
}
