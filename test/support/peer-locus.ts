/**
 * locus as a system of the peers bench: the server as `npm start` runs it (bench-server.ts,
 * SQLite file in a temporary directory), written to over v1 TCP (`blk` of the REST entry form,
 * the locus extension) and read over REST v2 with raw HTTP/1.1 keep-alive requests. The fleet
 * runs twice: `cre` with one write token per connection (each tracker its own credentials), and
 * `upd` with one token on every connection.
 */
import { benchRequest, benchRealm } from './bench-http.js';
import { benchAdminToken, startBenchServer, stopBenchServer } from './bench-server.js';
import { activeOf, coord, kindOf, objectId, type PeerObjects, type PeerUpdates } from './peer-data.js';
import { LocusHttp, LocusV1 } from './peer-locus-wire.js';
import type { BulkWriter, EncodedBatch, FleetClient, FleetVariant, PeerSystem, Queries } from './peer-system.js';

const realm = 'bench';

const location = (lon: number, lat: number): string => `{"longitude":${coord(lon)},"latitude":${coord(lat)}}`;
const blk = (entries: string[]): string => `[{"typ":"obj","act":"blk","rea":"${realm}","cid":"b","dat":{"objects":[${entries.join(',')}]}}]\n`;

/** One awaited single-object write: `act` is `cre` or `upd` (Hivekit's `loc` with `lon`/`lat`). */
const single = (act: string, index: number, lon: number, lat: number): string =>
  `[{"typ":"obj","act":"${act}","cid":"f","id":"${objectId(index)}","rea":"${realm}","loc":{"lon":${coord(lon)},"lat":${coord(lat)}}}]\n`;

/**
 * Makes the realm with filter indexes on LOCUS_BENCH_PEERS_FILTER_INDEXES (default `fuel`, as
 * PostGIS gets an index for the rare filter; empty: none), before the ingest as the peers' indexes
 * are. A build without the realm setting `filterIndexes` refuses it (400): the realm is then made
 * without, and the report says so. Returns what the report says.
 */
async function declareFilterIndexes(httpUrl: string): Promise<string> {
  const fields = (process.env.LOCUS_BENCH_PEERS_FILTER_INDEXES ?? 'fuel').split(',').filter((field) => field !== '');
  if (fields.length === 0) return 'no filter indexes';
  const res = await fetch(`${httpUrl}/admin/v1/realm/${realm}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${benchAdminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ settings: { filterIndexes: fields } }),
  });
  const body = await res.text();
  if (res.status === 200) return `filter indexes on ${fields.join(', ')}`;
  if (res.status === 400) return 'no filter indexes: this build has no realm setting `filterIndexes`, the rare filter scans';
  throw new Error(`PUT realm ${realm}: ${res.status} ${body.slice(0, 300)}`);
}

/** `connections`: how many the fleet opens at most (the server's connection limit is set above it). */
export async function startLocus(connections: number): Promise<PeerSystem> {
  const server = await startBenchServer({
    adminToken: benchAdminToken,
    env: {
      LOCUS_RATE_LIMIT: '100000000',
      LOCUS_RATE_BURST: '100000000',
      LOCUS_MAX_CONNECTIONS: String(connections + 100),
      // A blk of a whole batch of updates (LOCUS_MAX_BULK entries) fits in one line.
      LOCUS_MAX_MESSAGE_BYTES: String(4 * 2 ** 20),
    },
    args: (process.env.LOCUS_BENCH_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
    out: process.env.LOCUS_BENCH_SERVER_OUT,
  });
  const tcpPort = server.tcpPort;
  const httpPort = Number(new URL(server.httpUrl).port);
  let token: string;
  let indexed: string;
  try {
    indexed = await declareFilterIndexes(server.httpUrl);
    token = await benchRealm(server.httpUrl, benchAdminToken, realm);
  } catch (error) {
    await stopBenchServer(server);
    throw error;
  }
  const newToken = async (): Promise<string> =>
    ((await benchRequest(server.httpUrl, benchAdminToken, 'POST', `/admin/v1/realm/${realm}/token`, { scope: 'write' })) as { token: string }).token;
  const fleet = (act: string, tokens: (count: number) => Promise<string[]>): FleetVariant['open'] => async (count) =>
    Promise.all(
      (await tokens(count)).map(async (t): Promise<FleetClient> => {
        const c = await LocusV1.open(tcpPort, t);
        return { update: (index, lon, lat) => c.send(single(act, index, lon, lat)), close: () => c.close() };
      }),
    );
  return {
    name: 'locus',
    pid: server.child.pid as number,
    describe: `locus (SQLite store, ${indexed}): v1 TCP \`blk\` of the REST entry form (id, label, location, data); queries over REST v2`,
    encodeIngest: (objects: PeerObjects, from: number, to: number): EncodedBatch => {
      const entries: string[] = [];
      for (let i = from; i < to; i++) {
        const data = JSON.stringify({ kind: kindOf(i), speed: objects.speed[i], fuel: objects.fuel[i], active: activeOf(i) });
        entries.push(`{"id":"${objectId(i)}","label":${JSON.stringify(objects.labels[i])},"location":${location(objects.lon[i] as number, objects.lat[i] as number)},"data":${data}}`);
      }
      return { bytes: blk(entries), requests: 1 };
    },
    encodeUpdates: (updates: PeerUpdates, from: number, to: number): EncodedBatch => {
      const entries: string[] = [];
      for (let k = from; k < to; k++) entries.push(`{"id":"${objectId(updates.index[k] as number)}","location":${location(updates.lon[k] as number, updates.lat[k] as number)}}`);
      return { bytes: blk(entries), requests: 1 };
    },
    openBulk: async (): Promise<BulkWriter> => {
      const c = await LocusV1.open(tcpPort, token);
      return { write: (batch) => c.send(batch.bytes as string, batch.requests), close: () => c.close() };
    },
    fleetVariants: [
      { name: '`cre`, one write token per connection', open: fleet('cre', (count) => Promise.all(Array.from({ length: count }, newToken))) },
      { name: '`upd`, one write token on every connection', open: fleet('upd', (count) => Promise.resolve(Array.from({ length: count }, () => token))) },
    ],
    openQueries: async (): Promise<Queries> => {
      const c = await LocusHttp.open(httpPort, token);
      const base = `/v2/realm/${realm}`;
      const count = (body: unknown): number => Object.keys(body as object).length;
      return {
        circle: async (lon, lat, metres) =>
          count(await c.getJson(`${base}/object?limit=1000&shape=${encodeURIComponent(`{"cx":${coord(lon)},"cy":${coord(lat)},"r":${metres}}`)}`)),
        rareFilter: async () => count(await c.getJson(`${base}/object?limit=1000&filter=${encodeURIComponent('fuel<0.01')}`)),
        prefixSearch: async (prefix) => count(await c.getJson(`${base}/search?limit=1000&q=${encodeURIComponent(prefix)}`)),
        close: () => c.close(),
      };
    },
    stop: () => stopBenchServer(server),
  };
}
