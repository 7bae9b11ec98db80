/**
 * The scenarios of docs/instructions.md: a `hivescript-run` block after an example says what the
 * realm holds before the instruction is created, which writes follow, and what a user then sees
 * (the notation is described in the document, section "Trying the examples"). This module reads
 * a block into steps; test/integration/instructions-doc-run.test.ts carries them out.
 */

export interface Point {
  longitude: number;
  latitude: number;
}

/** One entry of a sendToUrl body: an object or area id, or a pair `a+b`. */
export type SentEntry = string;

export type Step =
  | { kind: 'object'; id: string; location: Point | null; data: Record<string, unknown> }
  | { kind: 'area'; id: string; centre: Point; radius: number; data: Record<string, unknown> }
  | { kind: 'write'; id: string; location: Point | null; data: Record<string, unknown> | null }
  | { kind: 'write-area'; id: string; data: Record<string, unknown> }
  | { kind: 'delete'; id: string }
  | { kind: 'expect'; id: string; data: Record<string, unknown> }
  | { kind: 'expect-area'; id: string; data: Record<string, unknown> }
  | { kind: 'expect-deleted'; id: string }
  | { kind: 'expect-post'; path: string; entries: SentEntry[] };

export interface ScenarioStep {
  step: Step;
  /** The step's line in the document (1-based). */
  line: number;
  /** The step as written. */
  text: string;
}

export interface Scenario {
  /** The realm before the instruction is created. */
  given: ScenarioStep[];
  /** The writes and expectations after it is created, in order. */
  steps: ScenarioStep[];
}

class ScenarioError extends Error {}

/** `13.40,52.50` as a point. */
function point(text: string | undefined): Point {
  const match = /^(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)$/.exec(text ?? '');
  if (match === null) throw new ScenarioError(`expected <longitude>,<latitude> but found ${JSON.stringify(text ?? '')}`);
  return { longitude: Number(match[1]), latitude: Number(match[2]) };
}

/** A JSON object (the rest of a line). */
function dataOf(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ScenarioError(`expected a JSON object but found ${JSON.stringify(text)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ScenarioError(`expected a JSON object but found ${JSON.stringify(text)}`);
  return value as Record<string, unknown>;
}

/** `<id> [at <lon>,<lat>] [<json>]` */
function idLocationData(rest: string): { id: string; location: Point | null; data: Record<string, unknown> | null } {
  const match = /^(\S+)(?:\s+at\s+(\S+))?(?:\s+(\{.*\}))?$/.exec(rest);
  if (match === null) throw new ScenarioError('expected <id> [at <longitude>,<latitude>] [<JSON data>]');
  return {
    id: match[1] ?? '',
    location: match[2] === undefined ? null : point(match[2]),
    data: match[3] === undefined ? null : dataOf(match[3]),
  };
}

/** `<word> <rest>` */
function split(text: string): [string, string] {
  const match = /^(\S+)\s*(.*)$/.exec(text);
  return [match?.[1] ?? '', match?.[2] ?? ''];
}

function parseStep(text: string): Step {
  const [verb, rest] = split(text);
  switch (verb) {
    case 'object': {
      const { id, location, data } = idLocationData(rest);
      return { kind: 'object', id, location, data: data ?? {} };
    }
    case 'area': {
      const match = /^(\S+)\s+circle\s+(\S+)\s+(\d+(?:\.\d+)?)(?:\s+(\{.*\}))?$/.exec(rest);
      if (match === null) throw new ScenarioError('expected area <id> circle <longitude>,<latitude> <radius> [<JSON data>]');
      return { kind: 'area', id: match[1] ?? '', centre: point(match[2]), radius: Number(match[3]), data: match[4] === undefined ? {} : dataOf(match[4]) };
    }
    case 'write': {
      const [first, after] = split(rest);
      if (first === 'area') {
        const [id, data] = split(after);
        return { kind: 'write-area', id, data: dataOf(data) };
      }
      const { id, location, data } = idLocationData(rest);
      if (location === null && data === null) throw new ScenarioError('a write needs a location, data or both');
      return { kind: 'write', id, location, data };
    }
    case 'delete': {
      if (!/^\S+$/.test(rest)) throw new ScenarioError('expected delete <id>');
      return { kind: 'delete', id: rest };
    }
    case 'expect': {
      const [first, after] = split(rest);
      if (first === 'area') {
        const [id, data] = split(after);
        return { kind: 'expect-area', id, data: dataOf(data) };
      }
      if (first === 'deleted') {
        if (!/^\S+$/.test(after)) throw new ScenarioError('expected expect deleted <id>');
        return { kind: 'expect-deleted', id: after };
      }
      if (first === 'post') {
        const [path, entries] = split(after);
        if (!path.startsWith('/') || entries === '') throw new ScenarioError('expected expect post <path> <entry> [<entry> ...]');
        return { kind: 'expect-post', path, entries: entries.split(/\s+/) };
      }
      return { kind: 'expect', id: first, data: dataOf(after) };
    }
    default:
      throw new ScenarioError(`unknown step ${JSON.stringify(verb)} (object, area, write, delete, expect)`);
  }
}

/**
 * Reads a `hivescript-run` block whose opening fence is on line `fenceLine`. `object` and `area`
 * lines come first (the realm before the instruction is created); the other steps follow.
 */
export function parseScenario(body: string, fenceLine: number): Scenario {
  const scenario: Scenario = { given: [], steps: [] };
  body.split('\n').forEach((raw, index) => {
    const text = raw.trim();
    if (text === '') return;
    const line = fenceLine + 1 + index;
    let step: Step;
    try {
      step = parseStep(text);
    } catch (error) {
      if (error instanceof ScenarioError) throw new Error(`docs/instructions.md:${line}: ${error.message}`);
      throw error;
    }
    const given = step.kind === 'object' || step.kind === 'area';
    if (given && scenario.steps.length > 0) throw new Error(`docs/instructions.md:${line}: ${step.kind} lines come before the writes and expectations (a later object is a write)`);
    (given ? scenario.given : scenario.steps).push({ step, line, text });
  });
  if (scenario.steps.length === 0) throw new Error(`docs/instructions.md:${fenceLine}: the scenario expects nothing`);
  return scenario;
}
