/**
 * Hivekit's attribute conditions (`atr`, compat 5.10): an array of condition strings, all of
 * which must hold, in the filter grammar of decisions.md (operators `=`, `!=`, `>`, `<`,
 * `>=`, `<=`; values a quoted string, a number, true/false/null or a bare word). A bare name
 * is a data property (`id` and `label` included); the object's own id and label are `$id`
 * and `$label`. The result is matched by domain/filter.ts matchesFilter and compiled by the
 * stores like any filter.
 */
import { describe } from './ids.js';
import { parseFilter } from './filter.js';
import { invalid, LocusError } from '../errors.js';
import type { FilterCondition } from './types.js';

const pseudoFields: Readonly<Record<string, string>> = { $id: 'id', $label: 'label' };

/**
 * Parses `atr` (undefined: no conditions). `where` names the key in messages (`dat.atr`).
 * Throws `invalid_filter` naming the condition that failed.
 */
export function parseAttributeConditions(value: unknown, maxConditions: number, where = 'dat.atr'): FilterCondition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(`${where} must be an array of condition strings such as "type=\\"car\\"" (got ${describe(value)})`, 'invalid_filter');
  if (value.length > maxConditions) throw invalid(`${where} has ${value.length} conditions; at most ${maxConditions} are allowed`, 'invalid_filter');
  return value.map((item, index) => parseOne(item, `${where}[${index}]`));
}

function parseOne(item: unknown, where: string): FilterCondition {
  if (typeof item !== 'string') throw invalid(`${where} must be a condition string such as "type=\\"car\\"" (got ${describe(item)})`, 'invalid_filter');
  let parsed: FilterCondition[];
  try {
    parsed = parseFilter(item, 2);
  } catch (err) {
    if (err instanceof LocusError) throw invalid(`${where} ${err.message.replace(/^filter condition 1 /, '')}`, 'invalid_filter');
    throw err;
  }
  const [condition] = parsed;
  if (condition === undefined) throw invalid(`${where} is empty; write a condition such as "type=\\"car\\""`, 'invalid_filter');
  if (parsed.length > 1) {
    throw invalid(`${where} holds more than one condition (a comma outside quotes); give each condition as its own string`, 'invalid_filter');
  }
  if (condition.field.startsWith('$')) {
    const own = pseudoFields[condition.field];
    if (own === undefined) throw invalid(`${where}: unknown field ${condition.field}; the object's own fields are $id and $label`, 'invalid_filter');
    return { field: own, op: condition.op, value: condition.value };
  }
  return { ...condition, target: 'data' };
}
