/** Milliseconds since the epoch; injected so tests can move time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

let lastMs = Number.NaN;
let lastIso = '';

/**
 * The ISO 8601 text of a time. The last one is remembered: every message asks for the
 * time it was received at, and under load many arrive within one millisecond (formatting
 * a Date was 2.7% of the server's time with 200 connections sending small updates).
 */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
