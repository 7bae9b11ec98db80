/**
 * Graceful shutdown of a process: stop accepting, let open connections finish within the
 * drain time (then cut them), let presence transitions finish, stop the instruction runtime
 * (giving its leases back) and the delivery queue, then close the bus, the history retention
 * and the store.
 */
import type { Logger } from 'pino';
import type { HistoryRetention } from '../service/history-retention.js';
import type { Listeners } from './listeners.js';
import type { Services } from './services.js';
import type { V1 } from './v1.js';

/**
 * How long open connections may take to finish when shutting down: the shutdown timeout
 * less a quarter of it (at most 2 s) kept for closing the store, so that a drain that uses
 * all its time still ends with a clean close rather than the deadline's exit code 1.
 */
export function connectionDrainMs(shutdownTimeoutMs: number): number {
  return shutdownTimeoutMs - Math.min(2000, Math.floor(shutdownTimeoutMs / 4));
}

export interface Running {
  services: Services;
  v1: V1;
  listeners: Listeners;
  retention: HistoryRetention;
  logger: Logger;
  shutdownTimeoutMs: number;
  /** The tracing this server started (null: off, or its caller's): closed last, which sends the spans left. */
  tracing?: { close(): Promise<void> } | null;
}

/** Waits for open connections until they are done or the drain time is up, then cuts what is left. */
async function drainConnections({ v1, listeners, services, shutdownTimeoutMs }: Running): Promise<void> {
  const { http, ws, tcp, httpSockets } = listeners;
  listeners.stopAccepting();
  const tcpClosed = tcp.stopAccepting();
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  let expired: () => void = () => undefined;
  const deadline = new Promise<void>((resolve) => (expired = resolve));
  const timer = setTimeout(() => {
    http.closeAllConnections();
    ws.destroyAll();
    tcp.destroyAll();
    for (const socket of httpSockets) socket.destroy();
    expired();
  }, connectionDrainMs(shutdownTimeoutMs));
  // v1 connections answer the message in hand, then get a close (code 1013 on WebSocket).
  await Promise.race([v1.gateway.shutdown(), deadline]);
  ws.destroyAll();
  // Once the connections are cut there is nothing left to wait for: a listener's close
  // callback may still be pending on a socket that is being torn down.
  await Promise.race([Promise.all([closed, tcpClosed]), deadline]);
  // Closed connections' presence transitions read the store: let them finish first.
  await Promise.race([services.presence.idle(), deadline]);
  clearTimeout(timer);
}

/** Shuts the process down; the function returned is safe to call more than once. */
export function shutdownOf(running: Running): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      await drainConnections(running);
      const { services, retention, logger } = running;
      services.control.close();
      // Other processes drop this one's presence claims at once, not when the lease runs out.
      services.presence.close();
      // Instruction leases are given back (other processes take the realms over at once);
      // deliveries under way stay in the outbox for the next holder.
      await services.instructionRuntime.close().catch((err: unknown) => logger.warn({ err }, 'the instruction runtime did not stop cleanly'));
      await services.delivery.close();
      await services.bus.close();
      await retention.stop();
      await services.store.close();
      await running.tracing?.close().catch((err: unknown) => logger.warn({ err }, 'tracing did not shut down cleanly'));
      logger.info('locus stopped');
    })();
    return closing;
  };
}
