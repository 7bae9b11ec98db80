/**
 * The Node.js options the server runs with: `npm start` passes them (package.json), as do
 * the benchmarks, which run the server or the store as it runs in production.
 *
 * `--max-semi-space-size=32`: V8's young generation gets 32 MiB per semi-space instead of
 * 16. The write path allocates fast (a batch's objects, held until it commits) and much of
 * it lives a few milliseconds; with the default, scavenges came so often that a batch's
 * objects were copied several times. Measured (alternating runs, same hour): bulk ingest
 * 62,500–67,000 → 73,700–78,700 objects/s; v1 event latency p99 at 10,000 updates/s
 * 14–17 → 5.7–8.3 ms. 64 MiB was no better than 32 and costs twice the memory.
 */
export const SEMI_SPACE_MIB = 32;

export const SERVER_NODE_OPTIONS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MIB}`];

/**
 * The semi-space size this process was started with, in MiB (`--max-semi-space-size`, on
 * the command line or in NODE_OPTIONS; the last one wins), or null: V8's default.
 */
export function semiSpaceOption(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): number | null {
  let size: number | null = null;
  for (const arg of [...nodeOptions.split(/\s+/), ...execArgv]) {
    const match = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(arg);
    if (match !== null) size = Number(match[1]);
  }
  return size;
}
