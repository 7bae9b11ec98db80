/**
 * A small parser of the Prometheus text exposition format (version 0.0.4), for tests that
 * scrape /metrics: samples with their labels, and each family's TYPE and HELP. Label values
 * are unescaped (`\\`, `\"`, `\n`). Throws on a line it cannot read, so a malformed scrape
 * fails the test that reads it.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** Family name → type (`counter`, `gauge`, `histogram`, …). */
  types: Map<string, string>;
  help: Map<string, string>;
  text: string;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseLabels(text: string, at: number, line: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at;
  for (;;) {
    while (text[i] === ' ' || text[i] === ',') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
    if (name === null || text[i + name[0].length] !== '=' || text[i + name[0].length + 1] !== '"') throw new Error(`bad labels in: ${line}`);
    i += name[0].length + 2;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      i++;
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i++];
        value += next === 'n' ? '\n' : (next ?? '');
      } else {
        value += c;
      }
    }
    labels[name[0]] = value;
  }
}

function parseValue(raw: string, line: string): number {
  // As Prometheus reads them (Go's ParseFloat): any case; prom-client writes `Nan`.
  if (/^\+?inf$/i.test(raw)) return Infinity;
  if (/^-inf$/i.test(raw)) return -Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  const n = Number(raw);
  if (raw === '' || Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

export function parseScrape(text: string): Scrape {
  const scrape: Scrape = { samples: [], types: new Map(), help: new Map(), text };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (TYPE|HELP) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (meta !== null) (meta[1] === 'TYPE' ? scrape.types : scrape.help).set(meta[2] as string, meta[3] as string);
      continue;
    }
    const name = NAME.exec(line);
    if (name === null) throw new Error(`bad sample line: ${line}`);
    let at = name[0].length;
    let labels: Record<string, string> = {};
    if (line[at] === '{') ({ labels, end: at } = parseLabels(line, at + 1, line));
    const [raw] = line.slice(at).trim().split(/\s+/);
    scrape.samples.push({ name: name[0], labels, value: parseValue(raw ?? '', line) });
  }
  return scrape;
}

const matches = (sample: Sample, name: string, labels: Record<string, string>): boolean =>
  sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v);

/** The value of the one sample `name` with exactly these labels (more labels on the sample: not it); 0 when absent. */
export function valueOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = scrape.samples.filter((s) => matches(s, name, labels) && Object.keys(s.labels).length === Object.keys(labels).length);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

/** The sum of every sample `name` whose labels include these. */
export function sumOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.samples.filter((s) => matches(s, name, labels)).reduce((sum, s) => sum + s.value, 0);
}

/** How much a sample grew from `before` to `after`. */
export function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return valueOf(after, name, labels) - valueOf(before, name, labels);
}

/** Every (series key → growth) that changed between two scrapes, for families with this prefix: what a test did not expect shows up here. */
export function changes(before: Scrape, after: Scrape, name: string): Map<string, number> {
  const key = (s: Sample): string => JSON.stringify(Object.entries(s.labels).sort());
  const old = new Map(before.samples.filter((s) => s.name === name).map((s) => [key(s), s.value]));
  const out = new Map<string, number>();
  for (const s of after.samples) {
    if (s.name !== name) continue;
    const grew = s.value - (old.get(key(s)) ?? 0);
    if (grew !== 0) out.set(key(s), grew);
  }
  return out;
}

/** Scrapes `url`/metrics and parses it; throws unless the answer is a 200 in the text format. */
export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text.slice(0, 200)}`);
  if (!(res.headers.get('content-type') ?? '').startsWith('text/plain; version=0.0.4')) throw new Error(`/metrics content type ${res.headers.get('content-type')}`);
  return parseScrape(text);
}
