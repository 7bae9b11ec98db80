/** scripts/flamegraph.mjs: a V8 CPU profile folded into stacks, laid out, drawn and summarized. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  startTime?: number;
  endTime?: number;
}
interface TreeNode {
  name: string;
  total: number;
  self: number;
  children: Map<string, TreeNode>;
}
interface Rect {
  name: string;
  x: number;
  depth: number;
  width: number;
  self: number;
}
interface Ranked {
  name: string;
  samples: number;
  share: number;
}
interface Flamegraph {
  foldProfile(profile: Profile, options?: { keepIdle?: boolean }): Map<string, number>;
  buildTree(folded: Map<string, number>): TreeNode;
  layout(tree: TreeNode, minSamples?: number): Rect[];
  summarize(folded: Map<string, number>, top?: number): { total: number; self: Ranked[]; inclusive: Ranked[] };
  renderSvg(folded: Map<string, number>, options?: { title?: string; width?: number; icicle?: boolean; intervalMs?: number | null }): string;
  sampleIntervalMs(profile: Profile): number | null;
}

const script = new URL('../../../scripts/flamegraph.mjs', import.meta.url);
const flame = (await import(script.href)) as Flamegraph;

/** Frames under the working directory are named relative to it. */
const APP = `${pathToFileURL(process.cwd()).href}/dist/a.js`;
const frame = (functionName: string, line = 0, url = APP): CallFrame => ({ functionName, url, lineNumber: line });

/**
 * (root) → main → { parse → parse (recursion), write }, and (idle), (garbage collector).
 * Samples: main self 1, parse 2, inner parse 3, write 4, idle 5, gc 1.
 */
const profile: Profile = {
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 6, 7] },
    { id: 2, callFrame: frame('main', 9), children: [3, 5] },
    { id: 3, callFrame: frame('parse', 19), children: [4] },
    { id: 4, callFrame: frame('parse', 19) },
    { id: 5, callFrame: frame('write', 29, 'node:fs') },
    { id: 6, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
    { id: 7, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
  ],
  samples: [2, 3, 3, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 6, 7],
  startTime: 0,
  endTime: 16_000,
};

const MAIN = 'main dist/a.js:10';
const PARSE = 'parse dist/a.js:20';
const WRITE = 'write node:fs:30';

describe('flamegraph', () => {
  it('folds each sample into its stack, root first, with file:line (1-based), without (root) and (idle)', () => {
    const folded = flame.foldProfile(profile);
    assert.deepEqual(
      [...folded].sort(),
      [
        ['(garbage collector)', 1],
        [MAIN, 1],
        [`${MAIN};${PARSE}`, 2],
        [`${MAIN};${PARSE};${PARSE}`, 3],
        [`${MAIN};${WRITE}`, 4],
      ].sort(),
    );
    assert.equal(flame.foldProfile(profile, { keepIdle: true }).get('(idle)'), 5);
  });

  it('falls back on hit counts when the profile has no sample list', () => {
    const counted: Profile = { nodes: profile.nodes.map((node) => ({ ...node, hitCount: profile.samples?.filter((id) => id === node.id).length ?? 0 })) };
    const folded = flame.foldProfile(counted);
    assert.equal([...folded.values()].reduce((a, b) => a + b, 0), 11);
  });

  it('lays frames out side by side by name, each as wide as its samples, children one row up', () => {
    const folded = new Map([
      ['b;y', 3],
      ['a', 2],
      ['b;x', 1],
      ['b', 4],
    ]);
    const rects = flame.layout(flame.buildTree(folded));
    const at = (name: string, depth: number): Rect | undefined => rects.find((r) => r.name === name && r.depth === depth);
    assert.deepEqual(at('(all samples)', 0), { name: '(all samples)', x: 0, depth: 0, width: 10, self: 0 });
    assert.deepEqual(at('a', 1), { name: 'a', x: 0, depth: 1, width: 2, self: 2 });
    assert.deepEqual(at('b', 1), { name: 'b', x: 2, depth: 1, width: 8, self: 4 });
    assert.deepEqual(at('x', 2), { name: 'x', x: 2, depth: 2, width: 1, self: 1 });
    assert.deepEqual(at('y', 2), { name: 'y', x: 3, depth: 2, width: 3, self: 3 });
    assert.equal(rects.length, 5);
    // Narrower than the minimum: left out with its subtree.
    assert.deepEqual(
      flame.layout(flame.buildTree(folded), 2).map((r) => r.name),
      ['(all samples)', 'a', 'b', 'y'],
    );
  });

  it('ranks self and inclusive time, a recursive function counted once per sample', () => {
    const summary = flame.summarize(
      new Map([
        ['main;parse', 2],
        ['main;parse;parse', 3],
        ['main;write', 4],
        ['main', 1],
      ]),
      2,
    );
    assert.equal(summary.total, 10);
    assert.deepEqual(summary.self, [
      { name: 'parse', samples: 5, share: 0.5 },
      { name: 'write', samples: 4, share: 0.4 },
    ]);
    assert.deepEqual(summary.inclusive, [
      { name: 'main', samples: 10, share: 1 },
      { name: 'parse', samples: 5, share: 0.5 },
    ]);
  });

  it('draws one titled rectangle per frame, widths in proportion, names escaped; flame upwards, icicle downwards', () => {
    const folded = new Map([
      ['main;a<b>', 3],
      ['main;c', 1],
    ]);
    const svg = flame.renderSvg(folded, { width: 420, intervalMs: 2 });
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.doesNotMatch(svg, /<script|href=/);
    assert.match(svg, /<title>a&lt;b&gt;: 3 samples, 6\.0 ms, 75\.00% \(self 75\.00%\)<\/title>/);
    const rect = (name: string, svgText: string): { x: number; y: number; width: number } => {
      const match = new RegExp(`<title>${name}:[^<]*</title><rect x="([\\d.]+)" y="([\\d.]+)" width="([\\d.]+)"`).exec(svgText);
      assert.ok(match !== null, `no rectangle for ${name}`);
      return { x: Number(match[1]), y: Number(match[2]), width: Number(match[3]) };
    };
    /** The root's name, as a pattern. */
    const ROOT = '\\(all samples\\)';
    // 400 px for 4 samples (10 px of margin each side), 0.5 px gap between rectangles.
    assert.deepEqual(rect(ROOT, svg), { x: 10, y: rect(ROOT, svg).y, width: 399.5 });
    assert.equal(rect('a&lt;b&gt;', svg).width, 299.5);
    assert.equal(rect('c', svg).x, 310);
    assert.ok(rect('main', svg).y < rect(ROOT, svg).y, 'a flame graph grows upwards');
    const icicle = flame.renderSvg(folded, { width: 420, icicle: true });
    assert.ok(rect('main', icicle).y > rect(ROOT, icicle).y, 'an icicle graph grows downwards');
  });

  it('turns a .cpuprofile file into an SVG and a summary; refuses a file that is not a profile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-flamegraph-'));
    try {
      const file = join(dir, 'run.cpuprofile');
      writeFileSync(file, JSON.stringify(profile));
      const run = spawnSync(process.execPath, [fileURLToPath(script), file, '--top', '3'], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^11 samples \(11 ms\)/);
      assert.match(run.stdout, /Top self time\n[^\n]*\n\s+45\.5%\s+5\s+parse dist\/a\.js:20\n\s+36\.4%\s+4\s+write node:fs:30\n/);
      assert.match(readFileSync(join(dir, 'run.svg'), 'utf8'), /<title>write node:fs:30: 4 samples/);
      assert.equal(flame.sampleIntervalMs(profile), 1);

      const bad = join(dir, 'bad.cpuprofile');
      writeFileSync(bad, '{"samples": []}');
      const refused = spawnSync(process.execPath, [fileURLToPath(script), bad], { encoding: 'utf8' });
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /^flamegraph: .*bad\.cpuprofile is not a V8 CPU profile/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
