/**
 * The SQLite store's spatial index: per realm, a PointGrid (internal/geo) of the current
 * locations of its objects, keyed by objects.rowid, held in memory.
 *
 * Why not an index in the file: an R*Tree (schema version 2) cost about 19 µs per new
 * object and a B-tree of grid cells about 8 µs (random pages written to the WAL on each
 * commit), against about 0.3 µs here; ingest was bound by it. The rows stay the truth:
 * every realm's grid is built from objects.lon/lat when the store opens, in the
 * background (warm: a chunk of rows per turn of the event loop, about 4 s per million
 * objects in all, so that no request waits for it), or at once by the first shape query
 * that needs it; kept current by the object store after each committed write, and
 * dropped when the realm is deleted.
 *
 * A realm not held when a write to it commits (new since the store opened, or dropped)
 * gets its grid built in the background too, from its own rows only (a realm build:
 * REALM_CHUNK rows in id order per turn of the event loop), the writes meanwhile applied
 * to it as to a pass's grids. Else the first shape query after a bulk import of a new
 * realm read every row of it at once, the event loop held meanwhile (0.5–3 s after an
 * import of 200,000 objects, measured): a realm that is written to is held, as every
 * realm is after the store opens.
 *
 * While the background pass runs, committed writes are applied to the grids it is
 * building too: the rows it reads later are the committed ones, so a grid ends the same
 * whichever of the two sees a row first. The file has one writer process (the server);
 * should another connection write it anyway (the admin CLI, a second server), `PRAGMA
 * data_version` changes, and every grid is built again from the rows (in the
 * background, or by the next shape query of its realm).
 */
import type { Database, Statement } from 'better-sqlite3';
import { PointGrid } from '../../geo/point-grid.js';

/** A committed location change: the object's rowid and its new location (null: none). */
export type LocationMove = [rowid: number, lon: number | null, lat: number | null];

/** Rows the background pass reads per turn of the event loop (tens of ms; 0.1 s at most measured). */
const WARM_CHUNK = 10_000;
/**
 * Rows a realm build reads per turn (each through the (realm, id) index): a few ms, so
 * that requests meanwhile wait little; it runs while the realm is being written anyway.
 */
export const REALM_CHUNK = 1_000;

interface WarmPass {
  /** Rows up to this rowid are read. */
  after: number;
  /**
   * The largest rowid when the pass began: rows written since are applied to the grids
   * being built by apply(), so the pass stops here (else it would chase a bulk ingest,
   * reading each new chunk of rows again).
   */
  last: number;
  /** Grids of the realms seen so far, held once the pass is done. */
  building: Map<string, PointGrid>;
}

/** A realm's grid under construction (see the header: realm builds). */
interface RealmBuild {
  /** Rows up to this id are read. */
  afterId: string;
  grid: PointGrid;
}

export class LocationIndex {
  private readonly grids = new Map<string, PointGrid>();
  private readonly selectLocations: Statement<[string], [number, number, number]>;
  private readonly selectChunk: Statement<[number, number], [number, string, number, number]>;
  private readonly selectRealmChunk: Statement<[string, string], [number, string, number | null, number | null]>;
  private readonly selectLastRowid: Statement<[], number | null>;
  private readonly selectVersion: Statement<[], number>;
  private version: number;
  private pass: WarmPass | null = null;
  private readonly builds = new Map<string, RealmBuild>();
  private warmed: Promise<void> | null = null;

  constructor(private readonly db: Database) {
    this.selectLocations = db
      // The realm's rowids from the (realm, id) index, then the rows in rowid order (the
      // order of the table's pages): a third faster than reading them in id order.
      .prepare<[string], [number, number, number]>(
        'SELECT rowid, lon, lat FROM objects WHERE rowid IN (SELECT rowid FROM objects WHERE realm = ?) AND lon IS NOT NULL',
      )
      .raw(true);
    this.selectChunk = db
      .prepare<[number, number], [number, string, number, number]>(
        `SELECT rowid, realm, lon, lat FROM objects WHERE rowid > ? AND rowid <= ? AND lon IS NOT NULL ORDER BY rowid LIMIT ${WARM_CHUNK}`,
      )
      .raw(true);
    this.selectRealmChunk = db
      .prepare<[string, string], [number, string, number | null, number | null]>(
        `SELECT rowid, id, lon, lat FROM objects WHERE realm = ? AND id > ? ORDER BY id LIMIT ${REALM_CHUNK}`,
      )
      .raw(true);
    this.selectLastRowid = db.prepare<[], number | null>('SELECT max(rowid) FROM objects').pluck();
    this.selectVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.selectVersion.get() ?? 0;
  }

  /**
   * Builds the grid of every realm not held yet, in the background: a chunk of rows per
   * turn of the event loop. Resolves when done, or when the pass was given up (the file
   * changed under it, the database closed). Never rejects.
   */
  warm(): Promise<void> {
    this.sync();
    this.warmed ??= this.runPass().finally(() => {
      this.warmed = null;
    });
    return this.warmed;
  }

  private async runPass(): Promise<void> {
    const pass: WarmPass = { after: 0, last: this.selectLastRowid.get() ?? 0, building: new Map() };
    this.pass = pass;
    try {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.pass !== pass || !this.db.open) return;
        this.sync();
        if (this.pass !== pass || !this.step(pass)) return;
      }
    } catch {
      // Left to the first query of each realm, which builds its grid itself.
      if (this.pass === pass) this.pass = null;
    }
  }

  /** Reads one chunk; false once the pass is over (its grids are then held). */
  private step(pass: WarmPass): boolean {
    const rows = this.selectChunk.all(pass.after, pass.last);
    for (const [rowid, realm, lon, lat] of rows) {
      // Built meanwhile by a query (and kept current since), or by a realm build.
      if (this.grids.has(realm) || this.builds.has(realm)) continue;
      let grid = pass.building.get(realm);
      if (grid === undefined) {
        grid = new PointGrid();
        pass.building.set(realm, grid);
      }
      grid.set(rowid, lon, lat);
    }
    const last = rows[rows.length - 1];
    if (rows.length === WARM_CHUNK && last !== undefined) {
      pass.after = last[0];
      return true;
    }
    for (const [realm, grid] of pass.building) if (!this.grids.has(realm) && !this.builds.has(realm)) this.grids.set(realm, grid);
    this.pass = null;
    return false;
  }

  /** Starts a realm build (header); its grid takes the writes from now on. */
  private startBuild(realm: string): PointGrid {
    const build: RealmBuild = { afterId: '', grid: new PointGrid() };
    this.builds.set(realm, build);
    void this.runBuild(realm, build);
    return build.grid;
  }

  private async runBuild(realm: string, build: RealmBuild): Promise<void> {
    try {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.builds.get(realm) !== build || !this.db.open) return;
        this.sync();
        if (this.builds.get(realm) !== build || !this.stepBuild(realm, build)) return;
      }
    } catch {
      // Left to the first query of the realm, which builds its grid itself.
      if (this.builds.get(realm) === build) this.builds.delete(realm);
    }
  }

  /** Reads one chunk of the realm's rows; false once the build is over (its grid is then held). */
  private stepBuild(realm: string, build: RealmBuild): boolean {
    const rows = this.selectRealmChunk.all(realm, build.afterId);
    for (const [rowid, , lon, lat] of rows) if (lon !== null && lat !== null) build.grid.set(rowid, lon, lat);
    const last = rows[rows.length - 1];
    if (rows.length === REALM_CHUNK && last !== undefined) {
      build.afterId = last[1];
      return true;
    }
    this.builds.delete(realm);
    this.grids.set(realm, build.grid);
    return false;
  }

  /** The realm's grid, built from its rows when not held (call within a read transaction). */
  grid(realm: string): PointGrid {
    this.sync();
    // A background pass under way is finished first: it may hold part of this realm.
    const pass = this.pass;
    if (pass !== null) while (this.step(pass));
    const build = this.builds.get(realm);
    if (build !== undefined) while (this.stepBuild(realm, build));
    let grid = this.grids.get(realm);
    if (grid === undefined) {
      grid = new PointGrid();
      for (const [rowid, lon, lat] of this.selectLocations.iterate(realm)) grid.set(rowid, lon, lat);
      this.grids.set(realm, grid);
    }
    return grid;
  }

  /**
   * Applies a committed write's moves; a realm whose grid is not held is built in the
   * background (by the pass under way, else by a realm build). The writer has looked at
   * `PRAGMA data_version` at the start of its transaction (noteVersion): a commit by
   * another connection since is seen by the next look, or by the next query.
   */
  apply(realm: string, moves: readonly LocationMove[]): void {
    let grid = this.grids.get(realm) ?? this.builds.get(realm)?.grid;
    if (grid === undefined && this.pass !== null) {
      grid = this.pass.building.get(realm);
      if (grid === undefined) {
        grid = new PointGrid();
        this.pass.building.set(realm, grid);
      }
    }
    grid ??= this.startBuild(realm);
    for (const [rowid, lon, lat] of moves) {
      if (lon === null || lat === null) grid.delete(rowid);
      else grid.set(rowid, lon, lat);
    }
  }

  /** True while a background pass is building grids (for tests and diagnostics). */
  get warming(): boolean {
    return this.pass !== null;
  }

  /** The realms whose grid a realm build is making (for tests and diagnostics). */
  building(): string[] {
    return [...this.builds.keys()];
  }

  /** The realms whose grid is held (for tests and diagnostics). */
  held(): string[] {
    return [...this.grids.keys()];
  }

  /** Drops a realm's grid (its objects are gone). */
  forget(realm: string): void {
    this.grids.delete(realm);
    this.builds.delete(realm);
    this.pass?.building.delete(realm);
  }

  /** Drops every grid when another connection has committed to the file since the last look. */
  private sync(): void {
    this.noteVersion(this.selectVersion.get() ?? 0);
  }

  /** As sync, with `PRAGMA data_version` as the caller just read it (one read for the writer's state). */
  noteVersion(version: number): void {
    if (version !== this.version) {
      this.version = version;
      this.grids.clear();
      this.builds.clear();
      this.pass = null;
      // Built again in the background (the next query of a realm builds its own at once).
      setImmediate(() => {
        if (this.db.open) void this.warm();
      });
    }
  }
}
