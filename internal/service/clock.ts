/** Milliseconds since the epoch; injected so tests can move time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
