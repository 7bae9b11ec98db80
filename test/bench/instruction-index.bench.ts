/**
 * `npm run bench`: what 1,000 instructions cost a write that none of them can be affected by, in
 * this process and without I/O: a realm mirror of 100,000 objects (internal/instructions/engine),
 * 1,000 instructions of every indexed kind (object conditions, `within` pairs, areas containing
 * objects, objects inside areas), each with an equality condition that the moving objects do not
 * meet. Every update moves an object and changes its data; the figure is the CPU time per update
 * of the index and evaluators on top of keeping the mirror current. Target: ≤ 5 µs.
 */
import type { TrackedObject } from '../../internal/domain/types.js';
import { applyObjectChange } from '../../internal/instructions/engine/change-evaluation.js';
import { InstructionEvaluator } from '../../internal/instructions/engine/instruction-evaluator.js';
import { InstructionIndex } from '../../internal/instructions/engine/instruction-index.js';
import { RealmMirror } from '../../internal/instructions/engine/realm-mirror.js';
import type { Condition, Program, WhenSet } from '../../internal/instructions/language/ast.js';

const instructionCount = 1000;
const objectCount = 100_000;
const rounds = 5;

const is = (field: string, value: string): Condition => ({ field, op: '=', value: { kind: 'literal', value, quoted: true } });
const below = (field: string, value: number): Condition => ({ field, op: '<', value: { kind: 'literal', value, quoted: false } });

function when(i: number): WhenSet {
  switch (i % 4) {
    case 0:
      return { kind: 'objects', filter: [is('type', `kind-${i}`), below('charge', 10)] };
    case 1:
      return { kind: 'pairs', filter: [is('type', `van-${i}`)], radius: 200, partner: [is('type', `depot-${i}`)] };
    case 2:
      return { kind: 'areasContaining', filter: [is('zone', `zone-${i}`)], objects: [is('fleet', `fleet-${i}`)] };
    default:
      return { kind: 'objectsInside', filter: [is('$id', `object-${i}`)], areas: [is('zone', `zone-${i}`)] };
  }
}

const scooter = (i: number, step: number): TrackedObject => ({
  id: `scooter-${i}`,
  label: null,
  location: { longitude: 13 + (i % 300) * 1e-3 + step * 1e-6, latitude: 52 + Math.floor(i / 300) * 1e-3, time: '2026-01-01T00:00:00.000Z' },
  data: { type: 'scooter', fleet: 'city', charge: (i + step) % 100 },
  seen: null,
});

/** CPU microseconds per update over `rounds` passes over every object. */
function cpuPerUpdate(update: (next: TrackedObject) => void): number {
  const start = process.cpuUsage();
  for (let step = 1; step <= rounds; step++) for (let i = 0; i < objectCount; i++) update(scooter(i, step));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (rounds * objectCount);
}

function main(): void {
  const bare = new RealmMirror();
  const mirror = new RealmMirror();
  for (let i = 0; i < objectCount; i++) {
    bare.applyObject(null, scooter(i, 0));
    mirror.applyObject(null, scooter(i, 0));
  }
  const index = new InstructionIndex();
  for (let i = 0; i < instructionCount; i++) {
    const program: Program = { every: null, when: when(i), then: [[{ kind: 'delete' }]], until: [] };
    const evaluator = new InstructionEvaluator(`ins-${i}`, program);
    evaluator.rescan(mirror);
    index.add(evaluator);
  }
  let changed = 0;
  const mirrorOnly = (next: TrackedObject): void => bare.applyObject(bare.object(next.id), next);
  const withInstructions = (next: TrackedObject): void => {
    changed += applyObjectChange(mirror, index, next.id, next).length;
  };
  // A pass each to warm up, then the figures.
  cpuPerUpdate(mirrorOnly);
  cpuPerUpdate(withInstructions);
  const base = cpuPerUpdate(mirrorOnly);
  const full = cpuPerUpdate(withInstructions);
  const extra = full - base;
  const lines = [
    '## Instructions: the cost of instructions a write does not touch (engine, in process)',
    '',
    `${instructionCount.toLocaleString('en-US')} instructions (object conditions, within pairs, areas containing objects, objects inside areas), ` +
      `a realm mirror of ${objectCount.toLocaleString('en-US')} objects, ${(rounds * objectCount).toLocaleString('en-US')} updates (a move and a data change each) ` +
      'that no instruction can be affected by: CPU per update of the index and evaluators beyond keeping the mirror current.',
    '',
    '| Measure | Value | Target |',
    '|---|---|---|',
    `| mirror alone, CPU per update | ${base.toFixed(2)} µs | |`,
    `| mirror, index and evaluators, CPU per update | ${full.toFixed(2)} µs | |`,
    `| extra CPU per update for ${instructionCount.toLocaleString('en-US')} untouched instructions | ${extra.toFixed(2)} µs | ≤ 5 µs ${extra <= 5 ? '(met)' : '(NOT met)'} |`,
    `| instruction sets changed | ${changed} | 0 |`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

main();
