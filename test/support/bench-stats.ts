/** The figures every bench reports: medians, percentiles, formatted numbers, a server's use of the machine. */
import { readFileSync } from 'node:fs';

/** The value at percentile `p` of sorted samples (nearest rank, lower); NaN for none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** The median of some runs (the lower middle of an even count); NaN for none. */
export function median(runs: readonly number[]): number {
  const sorted = [...runs].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

/** A whole number with thousands separators; a dash when there is none. */
export const fmt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');

/** Milliseconds with two decimals; a dash when there is none. */
export const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)} ms` : '–');

export interface ProcessUse {
  /** CPU time, user + system, all threads (ms; clock ticks of 10 ms). */
  cpuMs: number;
  /** Bytes written (/proc/<pid>/io wchar: WAL, database, sockets). */
  written: number;
}

/**
 * A process's CPU time and the bytes it has written so far (/proc/<pid>/stat and io); null
 * where /proc is not there. Per operation, these move far less with the host's load than a rate.
 */
export function processUse(pid: number | undefined): ProcessUse | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command (which is in parentheses and may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const written = Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
    return { cpuMs: ticks * 10, written };
  } catch {
    return null;
  }
}

/** CPU time (µs) and bytes written per operation between two processUse() readings; NaN without /proc. */
export function usePerOperation(from: ProcessUse | null, to: ProcessUse | null, operations: number): { cpuUs: number; bytes: number } {
  if (from === null || to === null || operations === 0) return { cpuUs: Number.NaN, bytes: Number.NaN };
  return { cpuUs: ((to.cpuMs - from.cpuMs) * 1000) / operations, bytes: (to.written - from.written) / operations };
}
