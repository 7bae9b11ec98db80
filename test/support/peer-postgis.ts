/**
 * PostgreSQL with PostGIS as a peer: a throwaway cluster (initdb into a temporary directory,
 * trust authentication, loopback TCP on a port of its own) with the server's defaults but
 * max_connections (the fleet opens 200). One table: id, label, a geography point, jsonb data;
 * a GiST index on the point, an index on lower(label) with text_pattern_ops (prefix search) and
 * one on the jsonb field fuel (the rare filter): the indexes a PostGIS user would make for
 * these queries.
 *
 * Durability as locus's: locus acknowledges a write once it is in the SQLite WAL file (written,
 * not synced: synchronous=NORMAL), so it survives a crash of the process but not a power loss.
 * PostgreSQL with fsync=off is the same: the commit record is written to the WAL before the
 * answer, never synced. Its default (fsync=on, synchronous_commit=on) waits for a disk flush per
 * commit; LOCUS_BENCH_PEERS_PG_FSYNC=on measures that instead.
 */
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeOf, coord, kindOf, objectId, type PeerObjects, type PeerUpdates } from './peer-data.js';
import { encodeQuery, PgConnection, sqlText } from './peer-pg-wire.js';
import { freePort, retryUntil, runToEnd, stopChild } from './peer-process.js';
import type { BulkWriter, EncodedBatch, FleetClient, PeerSystem, Queries, Skipped } from './peer-system.js';

const schema = `
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE TABLE objects (id text PRIMARY KEY, label text NOT NULL, position geography(Point, 4326) NOT NULL, data jsonb NOT NULL, updated timestamptz NOT NULL);
CREATE INDEX objects_position ON objects USING gist (position);
CREATE INDEX objects_label_prefix ON objects (lower(label) text_pattern_ops);
CREATE INDEX objects_fuel ON objects (((data->>'fuel')::float8));
`;

const point = (lon: number, lat: number): string => `'POINT(${coord(lon)} ${coord(lat)})'`;

/** One UPDATE of many rows from a VALUES list (a batch is one statement, one transaction). */
function updateFrom(rows: string[]): string {
  return `UPDATE objects o SET position = v.p::geography, updated = now() FROM (VALUES ${rows.join(',')}) v(id, p) WHERE o.id = v.id`;
}

/** The uid and gid of the `postgres` user when this process is root (initdb refuses root); null otherwise. */
async function postgresUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = await Promise.all([runToEnd('id', ['-u', 'postgres']), runToEnd('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

export async function startPostgis(): Promise<PeerSystem | Skipped> {
  const bin = process.env.LOCUS_BENCH_PG_BIN ?? '/usr/lib/postgresql/15/bin';
  if (!existsSync(join(bin, 'postgres')) || !existsSync(join(bin, 'initdb'))) {
    return { name: 'PostGIS', reason: `no postgres and initdb in ${bin} (install postgresql-15-postgis-3, or set LOCUS_BENCH_PG_BIN to the server's bin directory)` };
  }
  const sharedir = (await runToEnd(join(bin, 'pg_config'), ['--sharedir']).catch(() => '')).trim();
  if (sharedir !== '' && !existsSync(join(sharedir, 'extension', 'postgis.control'))) {
    return { name: 'PostGIS', reason: `PostGIS is not installed for ${bin} (no ${join(sharedir, 'extension', 'postgis.control')})` };
  }
  const user = await postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'locus-peers-pg-'));
  if (user !== null) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const asUser = user === null ? {} : { uid: user.uid, gid: user.gid };
  await runToEnd(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], { ...asUser, cwd: dir });
  const port = await freePort();
  const fsync = process.env.LOCUS_BENCH_PEERS_PG_FSYNC === 'on' ? 'on' : 'off';
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'max_connections=300', '-c', `fsync=${fsync}`],
    { ...asUser, cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  // SIGINT: PostgreSQL's fast shutdown (open sessions are ended).
  const stop = async (): Promise<void> => {
    await stopChild(child, 'SIGINT');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const setup = await retryUntil('postgres', 30_000, () => PgConnection.open(port, 'postgres', 'postgres'));
    await setup.query(schema);
    await setup.close();
  } catch (error) {
    await stop();
    throw error;
  }
  const connection = (): Promise<PgConnection> => PgConnection.open(port, 'postgres', 'postgres');
  return {
    name: 'PostGIS',
    pid: child.pid as number,
    describe: `PostgreSQL ${bin} with PostGIS (fsync=${fsync}): INSERT of many rows per statement, statements pipelined; id, label, geography point, jsonb data, GiST + label-prefix + fuel indexes`,
    encodeIngest: (objects: PeerObjects, from: number, to: number): EncodedBatch => {
      const rows: string[] = [];
      for (let i = from; i < to; i++) {
        const data = JSON.stringify({ kind: kindOf(i), speed: objects.speed[i], fuel: objects.fuel[i], active: activeOf(i) });
        rows.push(`(${sqlText(objectId(i))},${sqlText(objects.labels[i] as string)},${point(objects.lon[i] as number, objects.lat[i] as number)},${sqlText(data)},now())`);
      }
      return { bytes: encodeQuery(`INSERT INTO objects (id, label, position, data, updated) VALUES ${rows.join(',')}`), requests: 1 };
    },
    encodeUpdates: (updates: PeerUpdates, from: number, to: number): EncodedBatch => {
      const rows: string[] = [];
      for (let k = from; k < to; k++) rows.push(`(${sqlText(objectId(updates.index[k] as number))},${point(updates.lon[k] as number, updates.lat[k] as number)})`);
      return { bytes: encodeQuery(updateFrom(rows)), requests: 1 };
    },
    openBulk: async (): Promise<BulkWriter> => {
      const c = await connection();
      return {
        write: async (batch) => {
          await c.sendEncoded(batch.bytes as Buffer, batch.requests);
        },
        close: () => c.close(),
      };
    },
    fleetVariants: [
      {
        name: 'UPDATE of one row',
        open: (count) =>
          Promise.all(
            Array.from({ length: count }, async (): Promise<FleetClient> => {
              const c = await connection();
              return {
                update: async (index, lon, lat) => {
                  await c.query(`UPDATE objects SET position = ${point(lon, lat)}, updated = now() WHERE id = ${sqlText(objectId(index))}`);
                },
                close: () => c.close(),
              };
            }),
          ),
      },
    ],
    openQueries: async (): Promise<Queries> => {
      const c = await connection();
      // The planner's statistics after the bulk load, as anyone loading a table would have them.
      await c.query('ANALYZE objects');
      return {
        // On the sphere (use_spheroid false), as locus, Redis and Tile38 measure: the same objects at the edge.
        circle: async (lon, lat, metres) =>
          (await c.query(`SELECT id, label FROM objects WHERE ST_DWithin(position, ${point(lon, lat)}::geography, ${metres}, false) ORDER BY id LIMIT 1000`)).rows.length,
        rareFilter: async () => (await c.query(`SELECT id, label FROM objects WHERE (data->>'fuel')::float8 < 0.01 ORDER BY id LIMIT 1000`)).rows.length,
        prefixSearch: async (prefix) => (await c.query(`SELECT id, label FROM objects WHERE lower(label) LIKE ${sqlText(`${prefix}%`)} LIMIT 1000`)).rows.length,
        close: () => c.close(),
      };
    },
    stop,
  };
}
