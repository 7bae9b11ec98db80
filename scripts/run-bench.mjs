// `npm run bench`: runs every compiled test/bench/*.bench.js in turn (each prints a
// markdown section), then writes docs/benchmarks.md with the command, the machine and
// the figures. Pass part of a file name to run only some benches (docs are not rewritten then).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, platform, release } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { SERVER_NODE_OPTIONS } from '../dist/internal/runtime/node-options.js';

const dir = 'dist/test/bench';
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((part) => f.includes(part)))
  .sort();
/**
 * The machine's CPU time so far (/proc/stat, in clock ticks): all of it, and the part the
 * hypervisor gave to other guests (steal). Null where there is no /proc/stat.
 */
function cpuTicks() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return null;
  }
}

/** The share of CPU time stolen by the host between two cpuTicks(), as a markdown line. */
function stealLine(before, after) {
  if (before === null || after === null || after.total <= before.total) return '';
  const share = (100 * (after.steal - before.steal)) / (after.total - before.total);
  return (
    `\n\nHost CPU steal while this part ran: ${share.toFixed(1)}% of the machine's CPU time (taken by the ` +
    'hypervisor for other guests; above a few percent, the figures above are lower and noisier than the code allows).'
  );
}

const sections = [];
for (const file of files) {
  console.error(`== ${file}`);
  // The Node.js options of the server (npm start): the query bench runs the store in its own process.
  const before = cpuTicks();
  const result = spawnSync(process.execPath, ['--expose-gc', ...SERVER_NODE_OPTIONS, join(dir, file)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    process.stdout.write(result.stdout);
    console.error(`${file} failed with exit code ${result.status}`);
    process.exit(1);
  }
  const section = result.stdout.trim() + stealLine(before, cpuTicks());
  process.stdout.write(section + '\n');
  sections.push(section);
}
if (only.length === 0) {
  const cpu = cpus();
  const header = [
    '# Benchmarks',
    '',
    'Produced by `npm run bench` (builds, then runs every `test/bench/*.bench.ts`); this file is',
    'rewritten by each full run. Targets come from the issues; each table says whether it is met.',
    '',
    'On the shared 2-vCPU machines the project is developed on, figures move from run to run with',
    "the host's load (and its page cache is sometimes dropped between runs, so a query run may start",
    'cold): seen on the same code, throughputs ±20% and query p99s up to twice their best. Even with',
    'no CPU steal reported, the server CPU time per update of one build moved between 11.7 and 17.1 µs',
    'from one 4 s run to the next (2026-11-22). Compare several runs, not single figures; one part can',
    'be run alone with `npm run bench -- <part>`.',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${platform()} ${release()}`,
    `- Node.js ${process.version}`,
    '',
  ].join('\n');
  writeFileSync('docs/benchmarks.md', header + '\n' + sections.join('\n\n') + '\n');
  console.error('wrote docs/benchmarks.md');
}
