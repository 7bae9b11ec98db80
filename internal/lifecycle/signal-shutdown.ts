/**
 * SIGTERM and SIGINT: the first starts a graceful shutdown that must end within the
 * shutdown timeout; a second one ends the process at once. Every line written is a JSON
 * log line.
 *
 * Exit codes: 0 after a graceful shutdown; 1 when it failed or missed its deadline;
 * 130 (SIGINT) or 143 (SIGTERM) after a second signal, the codes a shell gives a process
 * a signal ended; a killed process (status 137) when the main thread was still stuck
 * in synchronous work past the deadline (shutdown-watchdog.ts).
 */
import type { Logger } from 'pino';
import { armWatchdog, type Watchdog } from './shutdown-watchdog.js';

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

export const secondSignalExitCode: Readonly<Record<ShutdownSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** How long after the deadline the watchdog thread kills a main thread that could not exit. */
export const WATCHDOG_GRACE_MS = 1000;

export interface SignalShutdownOptions {
  logger: Logger;
  /** LOCUS_SHUTDOWN_TIMEOUT_MS: from the first signal to the exit. */
  timeoutMs: number;
  /** The graceful shutdown. */
  close: () => Promise<void>;
  /** Ends the process; tests replace it. */
  exit?: (code: number) => void;
  /** Starts the watchdog thread; tests replace it. */
  watchdog?: (afterMs: number, line: string) => Watchdog;
}

/** The JSON log line the watchdog writes, in the logger's format (written outside it). */
function watchdogLine(timeoutMs: number): string {
  return JSON.stringify({
    level: 60,
    time: Date.now() + timeoutMs + WATCHDOG_GRACE_MS,
    service: 'locus',
    timeoutMs,
    msg: 'shutdown deadline passed with the event loop blocked; killing the process',
  });
}

/** What a SIGTERM or SIGINT does; installSignalShutdown hands it the signals. */
export function signalShutdown(options: SignalShutdownOptions): (signal: ShutdownSignal) => void {
  const { logger, timeoutMs, close } = options;
  const exit = options.exit ?? ((code: number): void => process.exit(code));
  const watchdog = options.watchdog ?? armWatchdog;
  let draining = false;

  const onSignal = (signal: ShutdownSignal): void => {
    if (draining) {
      logger.warn({ signal, exitCode: secondSignalExitCode[signal] }, 'second signal: exiting at once');
      exit(secondSignalExitCode[signal]);
      return;
    }
    draining = true;
    logger.info({ signal, timeoutMs }, 'shutting down');
    const guard = watchdog(timeoutMs + WATCHDOG_GRACE_MS, watchdogLine(timeoutMs));
    const deadline = setTimeout(() => {
      logger.error({ signal, timeoutMs }, 'shutdown did not finish within LOCUS_SHUTDOWN_TIMEOUT_MS; exiting');
      exit(1);
    }, timeoutMs);
    close().then(
      () => {
        clearTimeout(deadline);
        guard.disarm();
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(deadline);
        guard.disarm();
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  return onSignal;
}

export function installSignalShutdown(options: SignalShutdownOptions): void {
  const onSignal = signalShutdown(options);
  // Handlers stay installed after the first signal: the second is handled too (not left
  // to the default action), so it is logged and ends the process with a known code.
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}
