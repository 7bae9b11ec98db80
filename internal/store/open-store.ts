/** Opens the store named by LOCUS_STORE. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Store } from './port.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

export interface OpenStoreOptions {
  /** Hears of failures in the store's background work (they are retried). */
  onBackgroundError?: (err: Error) => void;
}

export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const path = url.slice('sqlite:'.length);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  return openSqliteStore(path, options.onBackgroundError === undefined ? {} : { onIndexerError: options.onBackgroundError });
}
