/**
 * The checker: from the syntax tree (ProgramNode) to the checked Program, refusing anything
 * the grammar lets through but the language does not mean (docs/instructions.md):
 * - `when` is `object(<c>)` or `area(<c>)`, optionally followed by one of
 *   `object(..).within(<radius>, <partner c>)`, `object(..).inside(<area c>)` or
 *   `area(..).containing(<object c>)`; these take comparisons only.
 * - `then` and `until` chains hold actions only: `set(<name>, <value>)`, `delete()`,
 *   `sendToUrl(<http or https url>)`.
 * - The right side of a comparison is a constant, `object(<c>).get(<name>)` (whose own
 *   comparisons are constants) or, in within's partner comparisons only, `this().get(<name>)`.
 * - An `every` period lies between one second and 365 days.
 * Pure: every refusal is an InstructionSyntaxError naming the line and column.
 */
import type { ScalarValue } from '../../domain/types.js';
import { hasLoneSurrogate, quote } from '../../domain/ids.js';
import type {
  Action,
  ArgumentNode,
  CallNode,
  ChainNode,
  Condition,
  Period,
  Position,
  Program,
  ProgramNode,
  ValueExpr,
  ValueNode,
  WhenSet,
} from './ast.js';
import { InstructionSyntaxError } from './syntax-error.js';

/** Bounds of an `every` period, in milliseconds. */
export const MIN_PERIOD_MS = 1000;
export const MAX_PERIOD_MS = 365 * 86_400_000;

/** What each function is, for telling the user why it does not fit where it stands. */
const FUNCTIONS: ReadonlyMap<string, 'selector' | 'filter' | 'action' | 'value'> = new Map([
  ['object', 'selector'],
  ['area', 'selector'],
  ['within', 'filter'],
  ['inside', 'filter'],
  ['containing', 'filter'],
  ['set', 'action'],
  ['delete', 'action'],
  ['sendToUrl', 'action'],
  ['get', 'value'],
  ['this', 'value'],
]);

const refuse = (at: Position, detail: string): InstructionSyntaxError => new InstructionSyntaxError(at, detail);

/** Refuses a name the language does not know, suggesting the right spelling when only the case differs. */
function unknownFunction(call: CallNode): InstructionSyntaxError {
  const near = [...FUNCTIONS.keys()].find((name) => name.toLowerCase() === call.name.toLowerCase());
  const hint = near === undefined ? `the functions are ${[...FUNCTIONS.keys()].map((name) => `${name}()`).join(', ')}` : `did you mean ${near}()? (function names are case-sensitive)`;
  return refuse(call.at, `unknown function ${call.name}(); ${hint}`);
}

/** Why a known function cannot stand where `where` says. */
function misplaced(call: CallNode, where: string): InstructionSyntaxError {
  const kind = FUNCTIONS.get(call.name);
  if (kind === undefined) return unknownFunction(call);
  const what = {
    selector: `${call.name}() selects things and starts a when part`,
    filter: `${call.name}() narrows a selection and follows ${call.name === 'containing' ? 'area()' : 'object()'} in a when part`,
    action: `${call.name}() is an action and belongs in a then or until part`,
    value: `${call.name}() gives values and is used on the right of a comparison, as in object(type="dial").get("value")`,
  }[kind];
  return refuse(call.at, `${call.name}() cannot stand ${where}: ${what}`);
}

/** A string the language takes in (names, values, urls) must be valid Unicode. */
function checkText(text: string, at: Position, what: string): string {
  if (hasLoneSurrogate(text)) throw refuse(at, `${what} holds an unpaired UTF-16 surrogate (not valid Unicode)`);
  return text;
}

function checkLiteral(node: Extract<ValueNode, { kind: 'literal' }>): ScalarValue {
  const { value } = node;
  if (typeof value === 'number' && !Number.isFinite(value)) throw refuse(node.at, 'the number is out of range');
  if (typeof value === 'string') checkText(value, node.at, 'the string');
  return value;
}

/** Where `this().get(..)` and `object(..).get(..)` may appear on the right of a comparison. */
interface ValueScope {
  /** Inside within's partner comparisons. */
  thisAllowed: boolean;
  /** Not inside another `object(..).get(..)`. */
  aggregateAllowed: boolean;
}

/** A name argument (`get`, `set`): a non-empty string, quoted or bare. */
function nameArgument(arg: ArgumentNode | undefined, call: CallNode, usage: string): string {
  if (arg === undefined || arg.kind !== 'value' || arg.value.kind !== 'literal' || typeof arg.value.value !== 'string') {
    throw refuse(arg?.at ?? call.at, `${call.name}() needs a property name as its first argument, as in ${usage}`);
  }
  if (arg.value.value === '') throw refuse(arg.at, `${call.name}() needs a non-empty property name`);
  return checkText(arg.value.value, arg.at, 'the property name');
}

/** `<chain>.get(<name>)`: the name, after checking the call's arguments. */
function getField(get: CallNode): string {
  const name = nameArgument(get.args[0], get, 'get("value")');
  const extra = get.args[1];
  if (extra !== undefined) throw refuse(extra.at, 'get() takes exactly one property name');
  return name;
}

function chainValue(chain: ChainNode, scope: ValueScope): ValueExpr {
  const [first, second, third] = chain.calls as [CallNode, ...CallNode[]];
  if (third !== undefined) throw refuse(third.at, `nothing can follow get() in a value`);
  if (first.name === 'this') {
    if (!scope.thisAllowed) {
      throw refuse(first.at, 'this() stands only in the partner comparisons of within(), as in within(100, type="bridge", height<this().get("height"))');
    }
    const arg = first.args[0];
    if (arg !== undefined) throw refuse(arg.at, 'this() takes no arguments');
    if (second?.name !== 'get') throw refuse(second?.at ?? first.at, 'this() must be followed by .get(<name>) to give a value');
    return { kind: 'this', field: getField(second) };
  }
  if (first.name === 'object') {
    if (!scope.aggregateAllowed) throw refuse(first.at, 'a value from object(...).get(...) cannot be used inside another one');
    if (second?.name !== 'get') throw refuse(second?.at ?? first.at, 'object() in a comparison must be followed by .get(<name>) to give values');
    const of = conditions(first, { thisAllowed: false, aggregateAllowed: false });
    return { kind: 'aggregate', of, field: getField(second) };
  }
  if (FUNCTIONS.get(first.name) === undefined) throw unknownFunction(first);
  throw refuse(first.at, `${first.name}() cannot give a value; a value is a constant, object(...).get(<name>) or, inside within(), this().get(<name>)`);
}

function condition(arg: Extract<ArgumentNode, { kind: 'comparison' }>, scope: ValueScope): Condition {
  if (arg.field === '') throw refuse(arg.at, 'the property name of a comparison cannot be empty');
  const field = checkText(arg.field, arg.at, 'the property name');
  const value: ValueExpr =
    arg.value.kind === 'literal'
      ? { kind: 'literal', value: checkLiteral(arg.value), quoted: arg.value.quoted }
      : chainValue(arg.value.chain, scope);
  return { field, op: arg.op, value };
}

/** The comparisons of `call` (all of its arguments from `from` on). */
function conditions(call: CallNode, scope: ValueScope, from = 0): Condition[] {
  return call.args.slice(from).map((arg) => {
    if (arg.kind !== 'comparison') {
      throw refuse(arg.at, `${call.name}() takes comparisons such as type="car", not a plain value`);
    }
    return condition(arg, scope);
  });
}

const TOP: ValueScope = { thisAllowed: false, aggregateAllowed: true };

/** `.within(<radius>, <partner comparisons>)`: the radius in metres. */
function radius(call: CallNode): number {
  const arg = call.args[0];
  if (
    arg === undefined ||
    arg.kind !== 'value' ||
    arg.value.kind !== 'literal' ||
    arg.value.quoted ||
    typeof arg.value.value !== 'number'
  ) {
    throw refuse(arg?.at ?? call.at, 'within() needs a radius in metres as its first argument, as in within(100, type="car")');
  }
  const metres = checkLiteral(arg.value) as number;
  if (metres <= 0) throw refuse(arg.at, 'the radius of within() must be greater than 0 metres');
  return metres;
}

function whenSet(chain: ChainNode): WhenSet {
  const [first, second, third] = chain.calls as [CallNode, ...CallNode[]];
  if (first.name !== 'object' && first.name !== 'area') {
    if (FUNCTIONS.get(first.name) === undefined) throw unknownFunction(first);
    throw misplaced(first, 'at the start of a when part (which begins with object() or area())');
  }
  if (third !== undefined) {
    if (FUNCTIONS.get(third.name) === 'action') throw misplaced(third, 'in a when part');
    throw refuse(third.at, `${third.name}() cannot follow ${second?.name ?? ''}(): a when part is object(...) or area(...) followed by at most one of within(), inside(), containing()`);
  }
  const filter = conditions(first, TOP);
  if (second === undefined) return first.name === 'object' ? { kind: 'objects', filter } : { kind: 'areas', filter };
  if (first.name === 'object' && second.name === 'within') {
    return { kind: 'pairs', filter, radius: radius(second), partner: conditions(second, { thisAllowed: true, aggregateAllowed: true }, 1) };
  }
  if (first.name === 'object' && second.name === 'inside') return { kind: 'objectsInside', filter, areas: conditions(second, TOP) };
  if (first.name === 'area' && second.name === 'containing') return { kind: 'areasContaining', filter, objects: conditions(second, TOP) };
  if (FUNCTIONS.get(second.name) === undefined) throw unknownFunction(second);
  const follows = first.name === 'object' ? 'within() or inside()' : 'containing()';
  throw refuse(second.at, `${second.name}() cannot follow ${first.name}() in a when part; ${first.name}() may be followed by ${follows}`);
}

const COUNTS = ['no arguments', 'one argument', 'two arguments'];

function values(call: CallNode, count: number, usage: string): ScalarValue[] {
  const takes = `${call.name}() takes ${COUNTS[count] ?? `${count} arguments`}, as in ${usage}`;
  const extra = call.args[count];
  if (extra !== undefined) throw refuse(extra.at, takes);
  if (call.args.length < count) throw refuse(call.at, takes);
  return call.args.map((arg) => {
    if (arg.kind !== 'value') throw refuse(arg.at, `${call.name}() takes plain values, not comparisons, as in ${usage}`);
    if (arg.value.kind !== 'literal') throw refuse(arg.at, `${call.name}() takes constant values, as in ${usage}`);
    return checkLiteral(arg.value);
  });
}

function sendToUrl(call: CallNode): Action {
  const first = call.args[0];
  if (first?.kind === 'comparison') {
    throw refuse(first.at, 'sendToUrl() takes a URL, not a comparison; write a URL that holds =, <, > or ! as a quoted string, as in sendToUrl("https://example.com/hook?a=b")');
  }
  const [url] = values(call, 1, 'sendToUrl("https://example.com/hook")');
  const at = call.args[0]?.at ?? call.at;
  if (typeof url !== 'string') throw refuse(at, 'sendToUrl() needs a URL, as in sendToUrl("https://example.com/hook")');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse(at, `sendToUrl() needs a full URL beginning with http:// or https:// (got ${quote(url)})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw refuse(at, `sendToUrl() sends to http:// or https:// URLs only (got ${quote(url)})`);
  }
  return { kind: 'sendToUrl', url };
}

function action(call: CallNode, previous: Action | undefined): Action {
  if (previous?.kind === 'delete' && call.name === 'set') throw refuse(call.at, 'set() cannot follow delete(): the things it would set are deleted');
  switch (call.name) {
    case 'set': {
      const [, value = null] = values(call, 2, 'set("status", "arrived")');
      const name = nameArgument(call.args[0], call, 'set("status", "arrived")');
      if (name === '$id' || name === '$label') {
        throw refuse(call.args[0]?.at ?? call.at, `set() cannot change ${name} (the ${name.slice(1)} is not a data property)`);
      }
      return { kind: 'set', name, value };
    }
    case 'delete':
      values(call, 0, 'delete()');
      return { kind: 'delete' };
    case 'sendToUrl':
      return sendToUrl(call);
    default:
      throw misplaced(call, 'in a then or until part (which holds the actions set(), delete() and sendToUrl())');
  }
}

function actions(chain: ChainNode): Action[] {
  const out: Action[] = [];
  for (const call of chain.calls) out.push(action(call, out[out.length - 1]));
  return out;
}

function period(every: Period): Period {
  const got = `(got ${every.amount} ${every.unit}${every.amount === 1 ? '' : 's'})`;
  if (every.ms < MIN_PERIOD_MS) throw refuse(every.at, `the period of every must be at least 1 second ${got}`);
  if (every.ms > MAX_PERIOD_MS) throw refuse(every.at, `the period of every must be at most 365 days ${got}`);
  return every;
}

/** Checks a parsed instruction; throws InstructionSyntaxError for the first refusal in source order. */
export function check(node: ProgramNode): Program {
  return {
    every: node.every === null ? null : period(node.every),
    when: whenSet(node.when),
    then: node.then.map(actions),
    until: node.until.map(actions),
  };
}
