/** Per-realm settings (admin API, Realm CRD). Pure. */
import { invalid } from '../errors.js';
import { describe, entriesOf, keyPath, quote, requireObject } from './ids.js';
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

/**
 * A partial settings object merged onto `base`: connectionTimeout an integer 1..31,536,000
 * (seconds, up to a year), historyRetentionDays an integer 0..36,500 (0 keeps everything),
 * rateLimit a positive integer (requests/s per token) or null (server default). An unknown
 * key is a 400. Code `invalid_settings`. Returns a new object.
 */
export function parseRealmSettings(value: unknown, base: RealmSettings): RealmSettings {
  const object = requireObject(value, WHERE, 'invalid_settings');
  const result: RealmSettings = {
    connectionTimeout: base.connectionTimeout,
    historyRetentionDays: base.historyRetentionDays,
    rateLimit: base.rateLimit,
  };
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
      default:
        throw invalid(
          `unknown key ${quote(key)} in ${WHERE}; allowed: connectionTimeout, historyRetentionDays, rateLimit`,
          'invalid_settings',
        );
    }
  }
  return result;
}
