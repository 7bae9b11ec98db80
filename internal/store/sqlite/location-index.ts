/**
 * The SQLite store's spatial index: per realm, a PointGrid (internal/geo) of the current
 * locations of its objects, keyed by objects.rowid, held in memory.
 *
 * Why not an index in the file: an R*Tree (schema version 2) cost about 19 µs per new
 * object and a B-tree of grid cells about 8 µs (random pages written to the WAL on each
 * commit), against about 0.3 µs here; ingest was bound by it. The rows stay the truth:
 * a realm's grid is built from objects.lon/lat on first use (about 3 s for a million
 * objects), kept current by the object store after each committed write, and dropped
 * when the realm is deleted. The file has one writer process (the server); should
 * another connection write it anyway (the admin CLI, a second server), `PRAGMA
 * data_version` changes, and every grid is rebuilt from the rows on its next use.
 */
import type { Database, Statement } from 'better-sqlite3';
import { PointGrid } from '../../geo/point-grid.js';

/** A committed location change: the object's rowid and its new location (null: none). */
export type LocationMove = [rowid: number, lon: number | null, lat: number | null];

export class LocationIndex {
  private readonly grids = new Map<string, PointGrid>();
  private readonly selectLocations: Statement<[string], [number, number, number]>;
  private readonly selectVersion: Statement<[], number>;
  private version: number;

  constructor(db: Database) {
    this.selectLocations = db
      // The realm's rowids from the (realm, id) index, then the rows in rowid order (the
      // order of the table's pages): a third faster than reading them in id order.
      .prepare<[string], [number, number, number]>(
        'SELECT rowid, lon, lat FROM objects WHERE rowid IN (SELECT rowid FROM objects WHERE realm = ?) AND lon IS NOT NULL',
      )
      .raw(true);
    this.selectVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.selectVersion.get() ?? 0;
  }

  /** The realm's grid, built from its rows when not held (call within a read transaction). */
  grid(realm: string): PointGrid {
    this.sync();
    let grid = this.grids.get(realm);
    if (grid === undefined) {
      grid = new PointGrid();
      for (const [rowid, lon, lat] of this.selectLocations.iterate(realm)) grid.set(rowid, lon, lat);
      this.grids.set(realm, grid);
    }
    return grid;
  }

  /** Applies a committed write's moves; a realm whose grid is not held is left to build later. */
  apply(realm: string, moves: readonly LocationMove[]): void {
    this.sync();
    const grid = this.grids.get(realm);
    if (grid === undefined) return;
    for (const [rowid, lon, lat] of moves) {
      if (lon === null || lat === null) grid.delete(rowid);
      else grid.set(rowid, lon, lat);
    }
  }

  /** Drops a realm's grid (its objects are gone). */
  forget(realm: string): void {
    this.grids.delete(realm);
  }

  /** Drops every grid when another connection has committed to the file since the last look. */
  private sync(): void {
    const version = this.selectVersion.get() ?? 0;
    if (version !== this.version) {
      this.version = version;
      this.grids.clear();
    }
  }
}
