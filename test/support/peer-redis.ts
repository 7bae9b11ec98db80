/**
 * Redis as a peer: `redis-server` (the Debian package) on a loopback port with a temporary
 * working directory and otherwise its defaults: RDB snapshots by the default save rules and no
 * append-only file, so an acknowledged write is lost in a crash until the next snapshot (a
 * weaker promise than the other systems', which keep it). Positions go into one geo set
 * (GEOADD: a sorted set keyed by geohash); Redis keeps no label or data with them, so filter
 * and search have no equivalent here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coord, objectId, type PeerObjects, type PeerUpdates } from './peer-data.js';
import { freePort, findBinary, retryUntil, stopChild } from './peer-process.js';
import { encodeCommand, encodeCommands, openResp, RespError, respOk, type RespConnection } from './peer-resp.js';
import type { BulkWriter, EncodedBatch, FleetClient, PeerSystem, Queries, Skipped } from './peer-system.js';

const key = 'fleet';
/** Members per GEOADD in bulk writes. */
const membersPerCommand = 64;

function geoadds(ids: readonly string[], lons: readonly number[], lats: readonly number[]): EncodedBatch {
  const commands: string[][] = [];
  for (let start = 0; start < ids.length; start += membersPerCommand) {
    const args = ['GEOADD', key];
    for (let i = start; i < Math.min(ids.length, start + membersPerCommand); i++) args.push(coord(lons[i] as number), coord(lats[i] as number), ids[i] as string);
    commands.push(args);
  }
  return { bytes: encodeCommands(commands), requests: commands.length };
}

/** Writes pipelined commands and fails on any error reply. */
async function sendChecked(connection: RespConnection, batch: EncodedBatch): Promise<void> {
  const replies = await connection.send(batch.bytes, batch.requests);
  const failed = replies.find((reply) => reply instanceof RespError);
  if (failed instanceof RespError) throw new Error(`Redis: ${failed.message}`);
}

export async function startRedis(): Promise<PeerSystem | Skipped> {
  const binary = findBinary(process.env.LOCUS_BENCH_REDIS_BIN ?? 'redis-server');
  if (binary === null) return { name: 'Redis', reason: 'no redis-server on PATH (scripts/install-bench-peers.sh installs it; or set LOCUS_BENCH_REDIS_BIN)' };
  const dir = mkdtempSync(join(tmpdir(), 'locus-peers-redis-'));
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const probe = await retryUntil('redis-server', 10_000, () => openResp(port));
    respOk(await probe.request(encodeCommand(['PING'])), 'PING');
    await probe.close();
  } catch (error) {
    await stop();
    throw error;
  }
  const connection = (): Promise<RespConnection> => openResp(port);
  return {
    name: 'Redis',
    pid: child.pid as number,
    describe: `Redis ${binary} (defaults: RDB snapshots, no append-only file): GEOADD of ${membersPerCommand} members per command, pipelined; positions only (one geo set)`,
    encodeIngest: (objects: PeerObjects, from: number, to: number) => {
      const ids: string[] = [];
      for (let i = from; i < to; i++) ids.push(objectId(i));
      return geoadds(ids, Array.from(objects.lon.subarray(from, to)), Array.from(objects.lat.subarray(from, to)));
    },
    encodeUpdates: (updates: PeerUpdates, from: number, to: number) =>
      geoadds(
        Array.from(updates.index.subarray(from, to), (i) => objectId(i)),
        Array.from(updates.lon.subarray(from, to)),
        Array.from(updates.lat.subarray(from, to)),
      ),
    openBulk: async (): Promise<BulkWriter> => {
      const c = await connection();
      return { write: (batch) => sendChecked(c, batch), close: () => c.close() };
    },
    fleetVariants: [
      {
        name: 'GEOADD of one member',
        open: (count) =>
          Promise.all(
            Array.from({ length: count }, async (): Promise<FleetClient> => {
              const c = await connection();
              return {
                update: async (index, lon, lat) => {
                  respOk(await c.request(encodeCommand(['GEOADD', key, coord(lon), coord(lat), objectId(index)])), 'GEOADD');
                },
                close: () => c.close(),
              };
            }),
          ),
      },
    ],
    openQueries: async (): Promise<Queries> => {
      const c = await connection();
      return {
        circle: async (lon, lat, metres) => {
          const reply = respOk(await c.request(encodeCommand(['GEOSEARCH', key, 'FROMLONLAT', coord(lon), coord(lat), 'BYRADIUS', metres, 'm', 'COUNT', 1000])), 'GEOSEARCH');
          return Array.isArray(reply) ? reply.length : 0;
        },
        rareFilter: null,
        prefixSearch: null,
        close: () => c.close(),
      };
    },
    stop,
  };
}
