#!/usr/bin/env node
// A V8 CPU profile (`node --cpu-prof`, a .cpuprofile file) as a flame graph: one
// self-contained SVG (no script, no external file), and a text summary of the functions
// with the most self time and the most inclusive time.
//
//   node scripts/flamegraph.mjs <profile.cpuprofile> [--out <file.svg>] [--title <text>]
//        [--icicle] [--width <px>] [--top <n>] [--keep-idle]
//
// The SVG goes to --out (default: the profile's path with .svg for .cpuprofile); the
// summary to stdout. Each sample's stack is folded into one line of frames, root first;
// the frames are then laid out as a tree: a rectangle's width is proportional to the
// samples that had its frame on their stack at that depth, its children sit above it
// (below with --icicle), ordered by name so that a frame keeps its place from one graph
// to the next. Hovering a rectangle shows the function, its file:line, its samples and
// its share of all samples. `(idle)` samples (the thread waiting for work) are left out
// unless --keep-idle: they would widen the graph with nothing to see.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One frame's name: the function, and where it is (file:line, 1-based) when known. */
export function frameName(callFrame) {
  const fn = callFrame.functionName === '' ? '(anonymous)' : callFrame.functionName;
  if (callFrame.url === '' || callFrame.url === undefined) return fn;
  return `${fn} ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;
}

/** A script's URL without the parts every frame shares (file://, the working directory). */
function shortUrl(url) {
  const cwd = pathToFileURL(process.cwd()).href + '/';
  if (url.startsWith(cwd)) return url.slice(cwd.length);
  if (url.startsWith('file://')) return url.slice('file://'.length);
  return url;
}

/**
 * The profile's samples folded: stack (frame names, root first, joined by `;`) → number
 * of samples. The synthetic `(root)` frame is left out; `(idle)` too unless keepIdle.
 */
export function foldProfile(profile, { keepIdle = false } = {}) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const stackOf = new Map();
  const stack = (id) => {
    let known = stackOf.get(id);
    if (known !== undefined) return known;
    const frames = [];
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const node = byId.get(at);
      if (node === undefined) break;
      if (node.callFrame.functionName === '(root)' && parentOf.get(at) === undefined) break;
      frames.push(frameName(node.callFrame));
    }
    known = frames.reverse().join(';');
    stackOf.set(id, known);
    return known;
  };
  const folded = new Map();
  const samples = profile.samples ?? [];
  if (samples.length > 0) {
    for (const id of samples) addSample(folded, stack(id), 1, keepIdle);
  } else {
    // A profile without its sample list still has each node's hit count.
    for (const node of profile.nodes) if ((node.hitCount ?? 0) > 0) addSample(folded, stack(node.id), node.hitCount, keepIdle);
  }
  return folded;
}

function addSample(folded, key, count, keepIdle) {
  if (key === '' || (!keepIdle && key === '(idle)')) return;
  folded.set(key, (folded.get(key) ?? 0) + count);
}

/** The mean time between samples in ms (for turning samples into time), or null. */
export function sampleIntervalMs(profile) {
  const samples = profile.samples?.length ?? 0;
  if (samples === 0 || profile.endTime === undefined || profile.startTime === undefined) return null;
  return (profile.endTime - profile.startTime) / 1000 / samples;
}

/** The folded stacks as a tree: { name, total, self, children: Map<name, node> }. */
export function buildTree(folded) {
  const root = { name: '(all samples)', total: 0, self: 0, children: new Map() };
  for (const [stack, count] of folded) {
    root.total += count;
    let node = root;
    for (const frame of stack.split(';')) {
      let child = node.children.get(frame);
      if (child === undefined) {
        child = { name: frame, total: 0, self: 0, children: new Map() };
        node.children.set(frame, child);
      }
      child.total += count;
      node = child;
    }
    node.self += count;
  }
  return root;
}

/**
 * Rectangles for the tree, in samples: x (samples to the left), depth (0: `all`), width
 * (samples). Children are ordered by name, laid side by side from their parent's x.
 * Nodes narrower than minSamples are left out with their subtrees.
 */
export function layout(tree, minSamples = 0) {
  const rects = [];
  const place = (node, x, depth) => {
    if (node.total < minSamples || node.total === 0) return;
    rects.push({ name: node.name, x, depth, width: node.total, self: node.self });
    let next = x;
    for (const child of [...node.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      place(child, next, depth + 1);
      next += child.total;
    }
  };
  place(tree, 0, 0);
  return rects;
}

/** Top functions by self samples and by inclusive samples (a function counted once per sample, also when recursive). */
export function summarize(folded, top = 15) {
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  for (const [stack, count] of folded) {
    total += count;
    const frames = stack.split(';');
    const leaf = frames[frames.length - 1];
    self.set(leaf, (self.get(leaf) ?? 0) + count);
    for (const frame of new Set(frames)) inclusive.set(frame, (inclusive.get(frame) ?? 0) + count);
  }
  const best = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, top)
      .map(([name, samples]) => ({ name, samples, share: total === 0 ? 0 : samples / total }));
  return { total, self: best(self), inclusive: best(inclusive) };
}

const escapeXml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A warm colour per name (stable across graphs); the engine's own frames in grey, Node's internals in blue. */
function colour(name) {
  if (/^\([^)]*\)$/.test(name)) return 'rgb(190,190,190)';
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
  if (/ node:/.test(name)) return `rgb(${100 + (hash % 40)},${150 + ((hash >> 8) % 50)},${210 + ((hash >> 16) % 40)})`;
  return `rgb(${205 + (hash % 50)},${80 + ((hash >> 8) % 130)},${40 + ((hash >> 16) % 40)})`;
}

const ROW = 17;
const FONT = 11;
const CHAR = FONT * 0.6;
const PAD_TOP = 36;
const PAD_SIDE = 10;

/** The flame graph as SVG text. */
export function renderSvg(folded, { title = 'Flame graph', width = 1200, icicle = false, intervalMs = null } = {}) {
  const tree = buildTree(folded);
  const scale = tree.total === 0 ? 0 : (width - 2 * PAD_SIDE) / tree.total;
  // Less than a tenth of a pixel wide: not drawn (keeps the file small).
  const rects = layout(tree, scale === 0 ? 0 : 0.1 / scale);
  const depth = rects.reduce((max, r) => Math.max(max, r.depth), 0);
  const height = PAD_TOP + (depth + 1) * ROW + 10;
  const y = (d) => (icicle ? PAD_TOP + d * ROW : height - 10 - (d + 1) * ROW);
  const time = (samples) => (intervalMs === null ? '' : `, ${(samples * intervalMs).toFixed(1)} ms`);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Verdana, sans-serif" font-size="${FONT}">`,
    `<rect width="100%" height="100%" fill="rgb(250,250,240)"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="${FONT + 4}">${escapeXml(title)}</text>`,
    `<text x="${PAD_SIDE}" y="${PAD_TOP - 6}" fill="rgb(90,90,90)">${tree.total} samples${time(tree.total)}; hover a frame for its function, file:line and share</text>`,
  ];
  for (const rect of rects) {
    const x = PAD_SIDE + rect.x * scale;
    const w = rect.width * scale;
    const share = ((100 * rect.width) / tree.total).toFixed(2);
    const selfShare = ((100 * rect.self) / tree.total).toFixed(2);
    const tip = `${rect.name}: ${rect.width} samples${time(rect.width)}, ${share}% (self ${selfShare}%)`;
    const fits = Math.floor((w - 4) / CHAR);
    const label = fits >= 3 ? (rect.name.length <= fits ? rect.name : `${rect.name.slice(0, fits - 2)}..`) : '';
    out.push(
      `<g><title>${escapeXml(tip)}</title><rect x="${x.toFixed(2)}" y="${y(rect.depth)}" width="${Math.max(0.1, w - 0.5).toFixed(2)}" height="${ROW - 1}" fill="${colour(rect.name)}" rx="2"/>` +
        (label === '' ? '' : `<text x="${(x + 3).toFixed(2)}" y="${y(rect.depth) + ROW - 5}">${escapeXml(label)}</text>`) +
        '</g>',
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The summary as text: two tables, self then inclusive. */
export function formatSummary(summary, intervalMs = null) {
  const lines = [`${summary.total} samples${intervalMs === null ? '' : ` (${(summary.total * intervalMs).toFixed(0)} ms)`}`];
  for (const [heading, rows] of [
    ['Top self time', summary.self],
    ['Top inclusive time', summary.inclusive],
  ]) {
    lines.push('', heading, '   share  samples  function');
    for (const row of rows) lines.push(`${(100 * row.share).toFixed(1).padStart(7)}%  ${String(row.samples).padStart(7)}  ${row.name}`);
  }
  return lines.join('\n');
}

function main(argv) {
  const options = { icicle: false, keepIdle: false, width: 1200, top: 15, out: null, title: null };
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--icicle') options.icicle = true;
    else if (arg === '--keep-idle') options.keepIdle = true;
    else if (arg === '--out' || arg === '--title' || arg === '--width' || arg === '--top') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      options[arg.slice(2)] = arg === '--width' || arg === '--top' ? Number(value) : value;
    } else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else files.push(arg);
  }
  if (files.length !== 1) throw new Error('usage: node scripts/flamegraph.mjs <profile.cpuprofile> [--out <file.svg>] [--title <text>] [--icicle] [--width <px>] [--top <n>] [--keep-idle]');
  if (!Number.isFinite(options.width) || options.width < 100) throw new Error('--width must be a number of pixels, at least 100');
  if (!Number.isInteger(options.top) || options.top < 1) throw new Error('--top must be a positive whole number');
  const [file] = files;
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(profile.nodes)) throw new Error(`${file} is not a V8 CPU profile (no "nodes")`);
  const folded = foldProfile(profile, { keepIdle: options.keepIdle });
  const intervalMs = sampleIntervalMs(profile);
  const out = options.out ?? file.replace(/\.cpuprofile$/, '') + '.svg';
  writeFileSync(out, renderSvg(folded, { title: options.title ?? basename(file), width: options.width, icicle: options.icicle, intervalMs }));
  process.stdout.write(`${formatSummary(summarize(folded, options.top), intervalMs)}\n\nwrote ${out}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`flamegraph: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
