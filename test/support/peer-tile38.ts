/**
 * Tile38 as a peer, when TILE38_BIN names its server binary (it is in no package registry:
 * scripts/install-bench-peers.sh builds it from source). On a loopback port with a temporary
 * data directory and otherwise its defaults: the append-only file is written before each reply
 * and synced once a second (as locus's writes, it survives a process crash). Each object is a point with
 * fields label (string), fuel and speed; Tile38 answers the filter with `WHERE fuel < 0.01` and
 * the prefix search with a case-insensitive regular expression on the label, both by a scan.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coord, objectId, type PeerObjects, type PeerUpdates } from './peer-data.js';
import { freePort, retryUntil, stopChild } from './peer-process.js';
import { encodeCommand, openResp, RespError, respOk, type RespConnection, type RespValue } from './peer-resp.js';
import type { BulkWriter, EncodedBatch, FleetClient, PeerSystem, Queries, Skipped } from './peer-system.js';

const key = 'fleet';

const setPoint = (index: number, lon: number, lat: number): string => encodeCommand(['SET', key, objectId(index), 'POINT', coord(lat), coord(lon)]);

/** The number of ids in a SCAN/WITHIN reply with IDS: `[cursor, [ids...]]`. */
function idCount(reply: RespValue): number {
  return Array.isArray(reply) && Array.isArray(reply[1]) ? reply[1].length : 0;
}

async function sendChecked(connection: RespConnection, batch: EncodedBatch): Promise<void> {
  const replies = await connection.send(batch.bytes, batch.requests);
  const failed = replies.find((reply) => reply instanceof RespError);
  if (failed instanceof RespError) throw new Error(`Tile38: ${failed.message}`);
}

export async function startTile38(): Promise<PeerSystem | Skipped> {
  const binary = process.env.TILE38_BIN ?? '';
  if (binary === '') return { name: 'Tile38', reason: 'TILE38_BIN is not set (scripts/install-bench-peers.sh builds tile38-server into ~/.cache/locus-tools/bin when its source is there)' };
  if (!existsSync(binary)) return { name: 'Tile38', reason: `TILE38_BIN names ${binary}, which does not exist` };
  const dir = mkdtempSync(join(tmpdir(), 'locus-peers-tile38-'));
  const port = await freePort();
  const child = spawn(binary, ['-h', '127.0.0.1', '-p', String(port), '-d', dir, '-q'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const probe = await retryUntil('tile38-server', 10_000, () => openResp(port));
    respOk(await probe.request(encodeCommand(['PING'])), 'PING');
    await probe.close();
  } catch (error) {
    await stop();
    throw error;
  }
  const connection = (): Promise<RespConnection> => openResp(port);
  return {
    name: 'Tile38',
    pid: child.pid as number,
    describe: `Tile38 ${binary} (defaults: append-only file): one SET per object (fields label, fuel, speed), pipelined`,
    encodeIngest: (objects: PeerObjects, from: number, to: number) => {
      let bytes = '';
      for (let i = from; i < to; i++) {
        bytes += encodeCommand(['SET', key, objectId(i), 'FIELD', 'label', objects.labels[i] as string, 'FIELD', 'fuel', objects.fuel[i] as number, 'FIELD', 'speed', objects.speed[i] as number, 'POINT', coord(objects.lat[i] as number), coord(objects.lon[i] as number)]);
      }
      return { bytes, requests: to - from };
    },
    encodeUpdates: (updates: PeerUpdates, from: number, to: number) => {
      let bytes = '';
      for (let k = from; k < to; k++) bytes += setPoint(updates.index[k] as number, updates.lon[k] as number, updates.lat[k] as number);
      return { bytes, requests: to - from };
    },
    openBulk: async (): Promise<BulkWriter> => {
      const c = await connection();
      return { write: (batch) => sendChecked(c, batch), close: () => c.close() };
    },
    fleetVariants: [
      {
        name: 'SET of one point',
        open: (count) =>
          Promise.all(
            Array.from({ length: count }, async (): Promise<FleetClient> => {
              const c = await connection();
              return {
                update: async (index, lon, lat) => {
                  respOk(await c.request(setPoint(index, lon, lat)), 'SET');
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
        circle: async (lon, lat, metres) =>
          idCount(respOk(await c.request(encodeCommand(['WITHIN', key, 'LIMIT', 1000, 'IDS', 'CIRCLE', coord(lat), coord(lon), metres])), 'WITHIN')),
        rareFilter: async () => idCount(respOk(await c.request(encodeCommand(['SCAN', key, 'LIMIT', 1000, 'WHERE', 'fuel < 0.01', 'IDS'])), 'SCAN WHERE')),
        prefixSearch: async (prefix) =>
          idCount(respOk(await c.request(encodeCommand(['SCAN', key, 'LIMIT', 1000, 'WHERE', `label =~ "(?i)(^| )${prefix}"`, 'IDS'])), 'SCAN WHERE =~')),
        close: () => c.close(),
      };
    },
    stop,
  };
}
