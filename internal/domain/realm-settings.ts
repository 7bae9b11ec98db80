/** Per-realm settings (admin API, Realm CRD). Pure. */
import { invalid } from '../errors.js';
import { describe, entriesOf, hasLoneSurrogate, keyPath, quote, requireObject, utf8Length } from './ids.js';
import type { RealmSettings } from './types.js';

export const defaultRealmSettings: RealmSettings = Object.freeze({
  connectionTimeout: 120,
  historyRetentionDays: 30,
  rateLimit: null,
});

const WHERE = 'settings';

function integerIn(value: unknown, key: string, min: number, max: number, unit: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(
      `${keyPath(WHERE, key)} must be an integer between ${min} and ${max} (${unit}) (got ${describe(value)})`,
      'invalid_settings',
    );
  }
  return value;
}

/** The most data fields a realm may index for its filters (each costs its writes an index entry). */
export const MAX_FILTER_INDEXES = 8;
/** The longest field name a filter index takes, in UTF-8 bytes. */
const MAX_FILTER_FIELD_BYTES = 256;

/**
 * `filterIndexes`: distinct data field names, at most MAX_FILTER_INDEXES, each one a filter
 * could name (not empty, none of `,`, `=`, `<`, `>`) and not `id` or `label` (columns,
 * indexed already). Kept in the order given.
 */
function filterIndexesOf(value: unknown): string[] {
  const key = keyPath(WHERE, 'filterIndexes');
  if (!Array.isArray(value) || value.length > MAX_FILTER_INDEXES) {
    throw invalid(`${key} must be an array of at most ${MAX_FILTER_INDEXES} data field names (got ${describe(value)})`, 'invalid_settings');
  }
  const fields: string[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'string' || item === '' || /[,=<>]/.test(item) || hasLoneSurrogate(item) || utf8Length(item) > MAX_FILTER_FIELD_BYTES) {
      throw invalid(
        `${key} holds ${describe(item)}: each must be a data field name as a filter writes it (a non-empty string of at most ${MAX_FILTER_FIELD_BYTES} UTF-8 bytes without , = < >)`,
        'invalid_settings',
      );
    }
    if (item === 'id' || item === 'label') {
      throw invalid(`${key} holds ${quote(item)}: filters on id and label use their own indexes; name data fields only`, 'invalid_settings');
    }
    if (fields.includes(item)) throw invalid(`${key} holds ${quote(item)} twice`, 'invalid_settings');
    fields.push(item);
  }
  return fields;
}

/**
 * A partial settings object merged onto `base`: connectionTimeout an integer 1..31,536,000
 * (seconds, up to a year), historyRetentionDays an integer 0..36,500 (0 keeps everything),
 * rateLimit a positive integer (requests/s per token) or null (server default),
 * filterIndexes data field names (filterIndexesOf; [] removes them: the key is then
 * absent, as in a realm that never declared any). An unknown key is a 400. Code
 * `invalid_settings`. Returns a new object.
 */
export function parseRealmSettings(value: unknown, base: RealmSettings): RealmSettings {
  const object = requireObject(value, WHERE, 'invalid_settings');
  const result: RealmSettings = {
    connectionTimeout: base.connectionTimeout,
    historyRetentionDays: base.historyRetentionDays,
    rateLimit: base.rateLimit,
  };
  if (base.filterIndexes !== undefined && base.filterIndexes.length > 0) result.filterIndexes = [...base.filterIndexes];
  for (const [key, item] of entriesOf(object)) {
    switch (key) {
      case 'connectionTimeout':
        result.connectionTimeout = integerIn(item, key, 1, 31_536_000, 'seconds');
        break;
      case 'historyRetentionDays':
        result.historyRetentionDays = integerIn(item, key, 0, 36_500, 'days; 0 keeps everything');
        break;
      case 'rateLimit':
        if (item !== null && (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)) {
          throw invalid(
            `${keyPath(WHERE, key)} must be a positive integer (requests per second per token) or null for the server default (got ${describe(item)})`,
            'invalid_settings',
          );
        }
        result.rateLimit = item;
        break;
      case 'filterIndexes': {
        const fields = filterIndexesOf(item);
        if (fields.length > 0) result.filterIndexes = fields;
        else delete result.filterIndexes;
        break;
      }
      default:
        throw invalid(
          `unknown key ${quote(key)} in ${WHERE}; allowed: connectionTimeout, historyRetentionDays, rateLimit, filterIndexes`,
          'invalid_settings',
        );
    }
  }
  return result;
}
