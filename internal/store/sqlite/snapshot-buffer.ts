/**
 * Snapshots an object's row holds (column `snaps`, schema.ts version 12) before they move
 * to `snapshots` together, as `past` does for fixes (history-rows.ts): a tracker whose data
 * changes with every fix then writes its row's page per update, and the page of its
 * snapshots once per SNAPSHOT_BUFFER_CHARS of them, instead of a random page of
 * `snapshots` per update (measured: updates that change data ran at about 60% of the
 * rate of location-only ones with one insert per update).
 *
 * The value is JSON text: an array of `[ver, last, label, data]`, in version order.
 */
import type { Data } from '../../domain/types.js';

/** Held snapshots move to `snapshots` once their text reaches this many characters. */
export const SNAPSHOT_BUFFER_CHARS = 2048;

export type HeldSnapshot = [ver: number, last: number, label: string | null, data: Data];

/** A snapshot appended to held ones (null: none yet). */
export function appendSnapshot(held: string | null, snapshot: HeldSnapshot): string {
  const entry = JSON.stringify(snapshot);
  return held === null ? `[${entry}]` : `${held.slice(0, -1)},${entry}]`;
}

/** The held snapshots (null: none). */
export function heldSnapshots(held: string | null): HeldSnapshot[] {
  return held === null ? [] : (JSON.parse(held) as HeldSnapshot[]);
}
