/**
 * What the peers bench asks of each system (locus, Redis, PostGIS, Tile38): its writes in its
 * own bulk form, pre-encoded before the clock starts, one awaited update per fleet connection,
 * and its queries. Each adapter encodes; the drivers of the bench (peers.bench.ts) measure.
 */
import type { PeerObjects, PeerUpdates } from './peer-data.js';

/** A batch of writes encoded for the wire: `requests` replies are awaited. */
export interface EncodedBatch {
  bytes: Buffer | string;
  requests: number;
}

export interface BulkWriter {
  write(batch: EncodedBatch): Promise<void>;
  close(): Promise<void>;
}

/** One connection of the fleet: sends one update of object `index` and awaits its reply. */
export interface FleetClient {
  update(index: number, lon: number, lat: number): Promise<void>;
  close(): Promise<void>;
}

/** A way of running the fleet (locus has two: `cre` with a token per connection, `upd` on one). */
export interface FleetVariant {
  name: string;
  open(connections: number): Promise<FleetClient[]>;
}

export interface Queries {
  /** The objects within `metres` of a point (at most 1,000); resolves with how many came back. */
  circle(lon: number, lat: number, metres: number): Promise<number>;
  /** `fuel < 0.01` (about 1%), at most 1,000; null where the system has no such condition. */
  rareFilter: (() => Promise<number>) | null;
  /** Objects whose label has a word starting with `prefix` (case-insensitive), at most 1,000; null where there is none. */
  prefixSearch: ((prefix: string) => Promise<number>) | null;
  close(): Promise<void>;
}

export interface PeerSystem {
  readonly name: string;
  /** The server's root process: its CPU time and memory are read with every process below it. */
  readonly pid: number;
  /** How this system writes in bulk, and how it stores the objects, for the report. */
  readonly describe: string;
  encodeIngest(objects: PeerObjects, from: number, to: number): EncodedBatch;
  encodeUpdates(updates: PeerUpdates, from: number, to: number): EncodedBatch;
  openBulk(): Promise<BulkWriter>;
  readonly fleetVariants: readonly FleetVariant[];
  openQueries(): Promise<Queries>;
  stop(): Promise<void>;
}

/** A system that could not start, and why (its binary is absent, say). */
export interface Skipped {
  name: string;
  reason: string;
}
