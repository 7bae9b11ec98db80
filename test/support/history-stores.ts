import assert from 'node:assert/strict';
import type { Location } from '../../internal/domain/types.js';
import type { Store } from '../../internal/store/port.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

/** How a test store keeps past fixes: how many its rows hold, and the limits of a `history` chunk. */
export interface HistoryLimits {
  held: number;
  span: number;
  fixes: number;
}

/** The name of a test store with these history limits. */
export function historyStoreName({ held, span, fixes }: HistoryLimits): string {
  return `${held} held, chunks of ${fixes} within ${span} ms`;
}

/** An in-memory store with small history limits (history-chunks.ts). */
export function openHistoryStore({ held, span, fixes }: HistoryLimits): SqliteStore {
  return openSqliteStore(':memory:', { pastBuffer: held, chunks: { span, fixes } });
}

/** In-memory stores with small history limits (history-chunks.ts), named by them. */
export function historyStores(limits: readonly HistoryLimits[]): { name: string; store: SqliteStore }[] {
  return limits.map((l) => ({ name: historyStoreName(l), store: openHistoryStore(l) }));
}

/** A history query of the property tests: order, optional bounds (normalised times), page size. */
export interface HistoryCheck {
  order: 'asc' | 'desc';
  from: string | undefined;
  to: string | undefined;
  limit: number;
}

/**
 * Reads an object's history page by page (following `next`) and asserts that the pages
 * hold exactly `fixes` (the oracle: one fix per time) within the bounds, in the order asked.
 */
export async function assertHistoryPages(store: Store, realm: string, id: string, fixes: Iterable<Location>, q: HistoryCheck, message: string): Promise<void> {
  const { from, to } = q;
  const expected = [...fixes]
    .filter((f) => (from === undefined || f.time >= from) && (to === undefined || f.time <= to))
    .sort((x, y) => (x.time < y.time ? -1 : 1));
  if (q.order === 'desc') expected.reverse();
  const got: Location[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages <= expected.length; pages++) {
    const page = await store.objects.history(realm, id, {
      order: q.order,
      limit: q.limit,
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    assert.ok(page.items.length <= q.limit);
    got.push(...page.items.map((e) => e.location));
    if (page.next === null) break;
    cursor = page.next;
  }
  assert.deepEqual(got, expected, message);
}
