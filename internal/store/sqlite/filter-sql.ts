/**
 * Compiles list filter conditions (domain/filter.ts) to SQL over the `objects` table,
 * with exactly matchesFilter's semantics, so that no row needs re-checking in
 * JavaScript:
 *
 * - `id` and `label` are columns; any other field is a key of `data` (JSONB since
 *   schema version 5), read with json_type/json_extract and a quoted JSON path (a `"`
 *   or `\` in the key is written as a \u escape, which SQLite's path parser decodes).
 * - Type-strict: a string matches only a JSON string, a number only a JSON number
 *   (compared as REAL: the double JSON.parse would give, also for integers that
 *   JSON.stringify wrote rounded), true/false only true/false; a nested object or array
 *   matches no value (`!=` then holds, as it does across types). json_extract gives the
 *   value; json_type is asked only where the value is ambiguous (dataCondition).
 * - Every compiled condition is TRUE or FALSE, never NULL (IS, coalesce), so that `!=`
 *   can be written as NOT(`=`): a missing field is `!=` anything but null.
 * - Strings compare with the BINARY collation: UTF-8 byte order, which is code point order.
 * - Conditions on `id` that bound it (`id>`, `id<`) narrow the (realm, id) index range
 *   instead of filtering it (`id>=`, `id<=` stay terms on the column, which SQLite also
 *   applies to the index range); a condition that can never hold (`id=5`, `a>true`)
 *   makes the whole query empty without running it.
 */
import { compareCodePoints } from '../../domain/filter.js';
import type { FilterCondition, ScalarValue } from '../../domain/types.js';

export interface CompiledFilter {
  /** SQL terms ANDed together (alias `o` for objects); empty when nothing remains to test. */
  terms: string[];
  params: (string | number)[];
  /** Exclusive lower bound on the id, beyond the page cursor; null for none. */
  idAfter: string | null;
  /** Exclusive upper bound on the id; null for none. */
  idBefore: string | null;
  /** True when some condition can never hold: the answer is empty. */
  never: boolean;
}

/** The JSON path that names data key `key` exactly. */
export function dataPath(key: string): string {
  return `$."${key.replace(/["\\]/g, (c) => (c === '"' ? '\\u0022' : '\\u005c'))}"`;
}

const TRUE = '1';
const FALSE = '0';

/**
 * Builds the SQL of one condition on a data key; terms are never NULL.
 *
 * Each JSON call on a row walks the row's JSONB to the key (no parse: the column held
 * JSON text before schema version 5, and every row's text was parsed). The value test
 * (json_extract) comes first and decides most rows alone; json_type runs only on the
 * rows that pass it, to reject what the value cannot tell apart: true/false
 * extract as 1/0, and CAST turns a string such as "90" into a number.
 */
function dataCondition(path: string, op: FilterCondition['op'], value: ScalarValue, params: (string | number)[]): string {
  const type = `json_type(o.data, ?)`;
  const extract = `json_extract(o.data, ?)`;
  const isNumber = `${type} IN ('integer', 'real')`;
  const equals = (): string => {
    if (value === null) {
      params.push(path);
      return `coalesce(${type} = 'null', 1)`;
    }
    if (typeof value === 'boolean') {
      params.push(path);
      return `(${type} IS '${value ? 'true' : 'false'}')`;
    }
    if (typeof value === 'number') {
      params.push(path, value, path);
      return `(CAST(${extract} AS REAL) IS ? AND ${isNumber})`;
    }
    // json_extract gives TEXT for a JSON string, and also for a nested object or array
    // (its JSON text). Only a value starting as JSON text does can equal that, so only then
    // is the type asked (the common equality stays one json_extract per row). Numbers and
    // true/false give INTEGER or REAL, never equal to a TEXT parameter.
    if (value.startsWith('{') || value.startsWith('[')) {
      params.push(path, value, path);
      return `(${extract} IS ? AND ${type} = 'text')`;
    }
    params.push(path, value);
    return `(${extract} IS ?)`;
  };
  switch (op) {
    case '=':
      return equals();
    case '!=':
      return `NOT ${equals()}`;
    case '>':
    case '<':
    case '>=':
    case '<=':
      if (typeof value === 'number') {
        params.push(path, value, path);
        return `(coalesce(CAST(${extract} AS REAL) ${op} ?, 0) AND ${isNumber})`;
      }
      if (typeof value === 'string') {
        // Only a JSON string compares: numbers and true/false extract as numbers (which
        // SQLite sorts before every TEXT), nested values as their JSON text.
        params.push(path, value, path);
        return `(coalesce(${extract} ${op} ?, 0) AND ${type} IS 'text')`;
      }
      return FALSE;
  }
}

/** The label column: a string or NULL. */
function labelCondition(op: FilterCondition['op'], value: ScalarValue, params: (string | number)[]): string {
  const equals = (): string => {
    if (value === null) return 'o.label IS NULL';
    if (typeof value !== 'string') return FALSE;
    params.push(value);
    return 'o.label IS ?';
  };
  switch (op) {
    case '=':
      return equals();
    case '!=': {
      const term = equals();
      return term === FALSE ? TRUE : `NOT (${term})`;
    }
    case '>':
    case '<':
    case '>=':
    case '<=':
      if (typeof value !== 'string') return FALSE;
      params.push(value);
      return `coalesce(o.label ${op} ?, 0)`;
  }
}

/** Compiles conditions (all must hold) to SQL terms and id bounds. */
export function compileFilter(conditions: readonly FilterCondition[]): CompiledFilter {
  const out: CompiledFilter = { terms: [], params: [], idAfter: null, idBefore: null, never: false };
  for (const { field, op, value, target } of conditions) {
    if (field === 'id' && target === undefined) {
      // The id is a string, never null or missing.
      if (op === '=' || op === '!=') {
        if (typeof value !== 'string') {
          if (op === '=') out.never = true;
          continue;
        }
        out.terms.push(op === '=' ? 'o.id = ?' : 'o.id != ?');
        out.params.push(value);
      } else if (typeof value !== 'string') {
        out.never = true;
      } else if (op === '>=' || op === '<=') {
        // Inclusive bounds stay terms: the index still serves them as a range.
        out.terms.push(op === '>=' ? 'o.id >= ?' : 'o.id <= ?');
        out.params.push(value);
      } else if (op === '>') {
        if (out.idAfter === null || compareCodePoints(value, out.idAfter) > 0) out.idAfter = value;
      } else if (out.idBefore === null || compareCodePoints(value, out.idBefore) < 0) {
        out.idBefore = value;
      }
      continue;
    }
    const term =
      field === 'label' && target === undefined ? labelCondition(op, value, out.params) : dataCondition(dataPath(field), op, value, out.params);
    if (term === FALSE) out.never = true;
    else if (term !== TRUE) out.terms.push(term);
  }
  return out;
}
