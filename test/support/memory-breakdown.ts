/**
 * What a process's resident memory is made of, for the benches: the V8 heap of the main
 * thread, the memory outside it that V8 knows of (array buffers), and the resident pages
 * of each mapping (/proc/self/smaps, Linux only): files mapped by SQLite's memory map
 * (which are the OS page cache, counted in RSS once touched) apart from anonymous memory
 * (the heaps of every thread, SQLite's page caches, malloc).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

export interface MemoryBreakdown {
  rssMib: number;
  /** V8 heap of this thread: used and reserved (total), MiB. */
  heapUsedMib: number;
  heapTotalMib: number;
  /** Each V8 heap space's committed MiB (new_space: the young generation, sized by --max-semi-space-size). */
  spaces: Map<string, number>;
  /** Memory outside the V8 heap held by JS objects (Buffers, typed arrays), MiB. */
  externalMib: number;
  arrayBuffersMib: number;
  /** Resident MiB by mapping: a mapped file by its name, `anonymous` for the rest (null off Linux). */
  mappings: Map<string, number> | null;
}

const MIB = 2 ** 20;

/** Resident KiB per mapping name from smaps text (anonymous, [heap], [stack] and the like count as `anonymous`). */
export function residentByMapping(smaps: string): Map<string, number> {
  const resident = new Map<string, number>();
  let name = 'anonymous';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\d+\s*(.*)$/.exec(line);
    if (header !== null) {
      const path = header[1]?.trim() ?? '';
      name = path === '' || path.startsWith('[') ? 'anonymous' : basename(path);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss !== null) resident.set(name, (resident.get(name) ?? 0) + Number(rss[1]));
  }
  return resident;
}

export function memoryBreakdown(): MemoryBreakdown {
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  let mappings: Map<string, number> | null = null;
  try {
    mappings = new Map([...residentByMapping(readFileSync('/proc/self/smaps', 'utf8'))].map(([name, kib]) => [name, kib / 1024]));
  } catch {
    mappings = null;
  }
  return {
    rssMib: usage.rss / MIB,
    heapUsedMib: heap.used_heap_size / MIB,
    heapTotalMib: heap.total_heap_size / MIB,
    spaces: new Map(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size / MIB])),
    externalMib: usage.external / MIB,
    arrayBuffersMib: usage.arrayBuffers / MIB,
    mappings,
  };
}

/** One line per figure, the mappings largest first (those under 1 MiB left out). */
export function formatBreakdown(memory: MemoryBreakdown): string {
  const mib = (v: number): string => `${v.toFixed(0)} MiB`;
  const lines = [
    `RSS ${mib(memory.rssMib)}`,
    `  V8 heap (main thread) used ${mib(memory.heapUsedMib)} of ${mib(memory.heapTotalMib)} (${[...memory.spaces]
      .filter(([, v]) => v >= 1)
      .map(([name, v]) => `${name} ${mib(v)}`)
      .join(', ')}); external ${mib(memory.externalMib)} (array buffers ${mib(memory.arrayBuffersMib)})`,
  ];
  if (memory.mappings !== null) {
    const sorted = [...memory.mappings].filter(([, v]) => v >= 1).sort((a, b) => b[1] - a[1]);
    for (const [name, v] of sorted) lines.push(`  resident ${name}: ${mib(v)}`);
  }
  return lines.join('\n');
}
