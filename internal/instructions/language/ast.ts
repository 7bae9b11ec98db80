/**
 * HiveScript's two trees: the syntax tree the parser builds from the grammar
 * (hivescript.peggy), and the checked program the checker derives from it, which is all the
 * evaluator ever sees. Plain data: no functions, no classes, so both can be logged and tested
 * by deep equality.
 */
import type { FilterOp, ScalarValue } from '../../domain/types.js';

/** Where something starts in the source (1-based line and column, 0-based offset). */
export interface Position {
  line: number;
  column: number;
  offset: number;
}

export type PeriodUnit = 'week' | 'day' | 'hour' | 'minute' | 'second';

/** An `every` period as written (`3 mins`, `2s`, `10 min`). */
export interface Period {
  amount: number;
  unit: PeriodUnit;
  /** The period in milliseconds. */
  ms: number;
  at: Position;
}

// ---- Syntax tree ------------------------------------------------------------------------

/** A literal as written: strings (quoted or bare), numbers, `true`, `false`, `null`. */
export interface LiteralNode {
  kind: 'literal';
  value: ScalarValue;
  /** Whether it was written as a quoted string or a bare word (bare words may also read as numbers etc.). */
  quoted: boolean;
  at: Position;
}

/** A function call chain used as a value: `object(type="dial").get("value")`, `this().get("x")`. */
export interface ChainValueNode {
  kind: 'chain';
  chain: ChainNode;
  at: Position;
}

export type ValueNode = LiteralNode | ChainValueNode;

/** One argument of a call: a simple value or a comparison `<field> <op> <value>`. */
export type ArgumentNode =
  | { kind: 'value'; value: ValueNode; at: Position }
  | { kind: 'comparison'; field: string; op: FilterOp; value: ValueNode; at: Position };

export interface CallNode {
  name: string;
  args: ArgumentNode[];
  at: Position;
}

/** Calls joined by `.`: `object(...).within(...)`. */
export interface ChainNode {
  calls: CallNode[];
  at: Position;
}

/** A whole instruction as parsed. `then` and `until` hold their `;`-separated chains. */
export interface ProgramNode {
  every: Period | null;
  when: ChainNode;
  then: ChainNode[];
  until: ChainNode[];
}

// ---- Checked program ----------------------------------------------------------------------

/**
 * A value on the right of a comparison, resolved:
 * - `literal`: a constant;
 * - `aggregate`: the values of `field` over the objects matching `of` (`object(<of>).get(<field>)`),
 *   averaged for `<`, `>`, `<=`, `>=` (hivescript.md 2.2); re-read whenever any object changes;
 * - `this`: `this().get(<field>)` inside `within`'s partner conditions: the input object's value.
 */
export type ValueExpr =
  | { kind: 'literal'; value: ScalarValue; quoted: boolean }
  | { kind: 'aggregate'; of: Condition[]; field: string }
  | { kind: 'this'; field: string };

/**
 * `field` is a data property, except `$id` (the object's or area's id), as in v1 attribute
 * conditions (compat 5.10).
 */
export interface Condition {
  field: string;
  op: FilterOp;
  value: ValueExpr;
}

/** What `when` selects; entries are objects, (object, partner) pairs or areas. */
export type WhenSet =
  /** `object(<c>)` */
  | { kind: 'objects'; filter: Condition[] }
  /** `object(<c>).within(<radius>, <partner c>)`: ordered pairs, no self-pairs, distance <= radius (metres). */
  | { kind: 'pairs'; filter: Condition[]; radius: number; partner: Condition[] }
  /** `area(<c>)` */
  | { kind: 'areas'; filter: Condition[] }
  /** `area(<c>).containing(<object c>)`: areas holding at least one matching object. */
  | { kind: 'areasContaining'; filter: Condition[]; objects: Condition[] }
  /** `object(<c>).inside(<area c>)` (a locus extension): objects inside at least one matching area. */
  | { kind: 'objectsInside'; filter: Condition[]; areas: Condition[] };

/** One call of a `then`/`until` chain; each acts on the context and passes it on. */
export type Action =
  | { kind: 'set'; name: string; value: ScalarValue }
  | { kind: 'delete' }
  | { kind: 'sendToUrl'; url: string };

export interface Program {
  every: Period | null;
  when: WhenSet;
  then: Action[][];
  until: Action[][];
}

/**
 * An entry of a `when` set, by identity (hivescript.md 4): an object by its id, a pair by the
 * ordered pair of ids, an area by its id.
 */
export type Entry = { kind: 'object'; id: string } | { kind: 'pair'; a: string; b: string } | { kind: 'area'; id: string };

/** The stable text of an entry, as stored in membership state: `o:<id>`, `p:<a>\u0000<b>` (JSON-encoded ids), `a:<id>`. */
export function entryKey(entry: Entry): string {
  switch (entry.kind) {
    case 'object':
      return `o:${entry.id}`;
    case 'area':
      return `a:${entry.id}`;
    case 'pair':
      return `p:${JSON.stringify([entry.a, entry.b])}`;
  }
}

/** The entry an entry key stands for. */
export function entryOfKey(key: string): Entry {
  const rest = key.slice(2);
  if (key.startsWith('o:')) return { kind: 'object', id: rest };
  if (key.startsWith('a:')) return { kind: 'area', id: rest };
  const [a, b] = JSON.parse(rest) as [string, string];
  return { kind: 'pair', a, b };
}
