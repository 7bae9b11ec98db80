/**
 * List filters (`filter=<cond>[,<cond>...]`): the parser and THE matcher. Every store
 * decides "matches" with matchesFilter (the SQLite store after its SQL prefilter), so the
 * semantics live here once. Pure: no I/O.
 *
 * Grammar (docs/api.md, "Filters"):
 * - Conditions are separated by commas; all must hold. An empty text is no filter.
 * - A condition is `<field><op><value>`. The operator is the first of `!=`, `>=`, `<=`,
 *   `=`, `>`, `<` found scanning left to right, the two-character operator winning at the
 *   same position: `a>=5` is field `a`, operator `>=`, value 5. A field name therefore
 *   never holds `,`, `=`, `<`, `>` or the pair `!=`; it must not be empty.
 * - The value is `true`, `false`, `null`, a JSON number (`5`, `-1.5e3`; `05`, `.5`, `+1`
 *   are not JSON numbers), a JSON string in double quotes (may hold commas, operators and
 *   JSON escapes; it must be followed by a comma or the end), or else a bare string taken
 *   as written up to the next comma (possibly empty: `a=` compares with ""). A bare value
 *   must not begin with an operator character (`=`, `<`, `>`, `!`): `a>==5` would read
 *   as a typo of `a>=5`, so such a value is written quoted (`a>"=5"`). Nothing is
 *   trimmed: `a = 5` is field `a ` and the bare string ` 5`. Everything is case-sensitive.
 */
import { invalid, type LocusError } from '../errors.js';
import { hasLoneSurrogate, quote } from './ids.js';
import type { DataValue, FilterCondition, FilterOp, ScalarValue, TrackedObject } from './types.js';

/** A JSON number (RFC 8259 grammar), nothing around it. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const GRAMMAR_HINT = 'a condition is <field><op><value> with op one of !=, >=, <=, =, >, <';

function conditionError(index: number, text: string, reason: string): LocusError {
  return invalid(`filter condition ${index} (${quote(text)}) ${reason}`, 'invalid_filter');
}

/** Position of the operator in `text` from `start`, stopping at a comma: [position, op] or null. */
function findOperator(text: string, start: number): [number, FilterOp] | null {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2c /* , */) return null;
    if (c === 0x21 /* ! */ && text.charCodeAt(i + 1) === 0x3d /* = */) return [i, '!='];
    if (c === 0x3d) return [i, '='];
    const equalsNext = text.charCodeAt(i + 1) === 0x3d;
    if (c === 0x3e /* > */) return equalsNext ? [i, '>='] : [i, '>'];
    if (c === 0x3c /* < */) return equalsNext ? [i, '<='] : [i, '<'];
  }
  return null;
}

/** The typed value of an unquoted value text. */
function bareValue(raw: string, index: number, condition: string): ScalarValue {
  if (/^[=<>!]/.test(raw)) {
    throw conditionError(
      index,
      condition,
      `has a bare value that begins with an operator character (=, <, >, !); write it as the quoted string ${quote(raw)}`,
    );
  }
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (JSON_NUMBER.test(raw)) {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw conditionError(index, condition, `has a number out of range (${quote(raw)})`);
    return n === 0 ? 0 : n; // -0 is 0
  }
  return raw;
}

/**
 * Parses a list filter into its conditions (see the grammar above). `''` gives [].
 * Throws `invalid_filter` naming the condition (1-based, with its text) that failed: an
 * empty condition (`a=1,,b=2`, a leading or trailing comma), no operator, an empty field
 * name, an unterminated or invalid JSON string, text after a closing quote, a number out
 * of the double range; and for more than `maxConditions` conditions or a lone surrogate.
 */
export function parseFilter(text: string, maxConditions: number): FilterCondition[] {
  if (text === '') return [];
  if (hasLoneSurrogate(text)) {
    throw invalid('filter holds an unpaired UTF-16 surrogate (not valid Unicode text)', 'invalid_filter');
  }
  const conditions: FilterCondition[] = [];
  let pos = 0;
  for (let index = 1; ; index++) {
    if (conditions.length >= maxConditions) {
      throw invalid(`filter has more than ${maxConditions} conditions`, 'invalid_filter');
    }
    const start = pos;
    const nextComma = text.indexOf(',', start);
    const segmentEnd = nextComma < 0 ? text.length : nextComma;
    const segment = text.slice(start, segmentEnd);
    if (segment === '') {
      const where = start === text.length ? ' (the filter ends with a comma)' : start === 0 ? ' (the filter starts with a comma)' : '';
      throw conditionError(index, segment, `is empty${where}; ${GRAMMAR_HINT}`);
    }
    const found = findOperator(text, start);
    if (found === null) throw conditionError(index, segment, `has no operator; ${GRAMMAR_HINT}`);
    const [opAt, op] = found;
    const field = text.slice(start, opAt);
    if (field === '') throw conditionError(index, segment, `has no field name before ${op}; ${GRAMMAR_HINT}`);
    const valueStart = opAt + op.length;
    let value: ScalarValue;
    let end: number;
    if (text.charCodeAt(valueStart) === 0x22 /* " */) {
      let i = valueStart + 1;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === 0x5c /* \ */) i += 2;
        else if (c === 0x22) break;
        else i++;
      }
      if (i >= text.length) {
        throw conditionError(index, text.slice(start), 'has an unterminated quoted string (no closing ")');
      }
      end = i + 1;
      const condition = text.slice(start, end);
      let quoted: string;
      try {
        quoted = JSON.parse(text.slice(valueStart, end)) as string;
      } catch {
        throw conditionError(index, condition, 'has a quoted value that is not a valid JSON string (check its escapes)');
      }
      if (hasLoneSurrogate(quoted)) {
        throw conditionError(index, condition, 'has a quoted value with an unpaired surrogate escape (not valid Unicode text)');
      }
      value = quoted;
      if (end < text.length && text.charCodeAt(end) !== 0x2c) {
        const after = text.indexOf(',', end);
        const whole = text.slice(start, after < 0 ? text.length : after);
        throw conditionError(index, whole, 'has text after the closing quote; a quoted value must be followed by a comma or the end');
      }
    } else {
      end = segmentEnd;
      value = bareValue(text.slice(valueStart, end), index, segment);
    }
    conditions.push({ field, op, value });
    if (end >= text.length) return conditions;
    pos = end + 1; // past the comma
  }
}

/**
 * Compares two strings by Unicode code point (the order of their UTF-8 bytes, as SQLite's
 * BINARY collation does), not by UTF-16 unit as JavaScript's `<` does: '\uFFFF' < '😀'.
 * Returns -1, 0 or 1.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order equals code point order except that surrogates (D800–DFFF, code points
    // above FFFF) sort below E000–FFFF; move the surrogates above them.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * What a filter reads of a record: an object's, and equally an area's, id, label and data
 * (instructions filter areas by the same rules).
 */
export type FilterSubject = Pick<TrackedObject, 'id' | 'label' | 'data'>;

/** The value a condition's field names: `id`, `label` (null when unset) or an own data property (undefined when missing). */
export function fieldValue(obj: FilterSubject, field: string, target: 'data' | undefined): DataValue | undefined {
  if (target === undefined && field === 'id') return obj.id;
  if (target === undefined && field === 'label') return obj.label;
  return Object.hasOwn(obj.data, field) ? obj.data[field] : undefined;
}

/**
 * One condition on one value. A nested value (an object or an array) is never equal to,
 * nor ordered against, a condition's value (decisions.md): `=` and the orders are false,
 * and `!=`, true of any value of another type, is true.
 */
function matchesOne(actual: DataValue | undefined, op: FilterOp, value: ScalarValue): boolean {
  switch (op) {
    case '=':
      return value === null ? actual === undefined || actual === null : actual === value;
    case '!=':
      return value === null ? actual !== undefined && actual !== null : actual !== value;
    case '>':
    case '<':
    case '>=':
    case '<=': {
      let order: number;
      if (typeof actual === 'number' && typeof value === 'number') order = actual < value ? -1 : actual > value ? 1 : 0;
      else if (typeof actual === 'string' && typeof value === 'string') order = compareCodePoints(actual, value);
      else return false;
      if (op === '>') return order > 0;
      if (op === '<') return order < 0;
      return op === '>=' ? order >= 0 : order <= 0;
    }
  }
}

/**
 * True when the object meets every condition. `=`/`!=` compare type and value (5 never
 * equals "5"); `!=` also matches a missing field; `=null` matches a missing or null field,
 * `!=null` a present, non-null one. `>`, `<`, `>=`, `<=` compare numbers with numbers and
 * strings with strings in code point order, never across types, on null or on a missing
 * field (so `>=` is not "not `<`").
 */
export function matchesFilter(obj: FilterSubject, conditions: readonly FilterCondition[]): boolean {
  for (const { field, op, value, target } of conditions) {
    if (!matchesOne(fieldValue(obj, field, target), op, value)) return false;
  }
  return true;
}
