/**
 * The data every system of the peers bench gets: objects uniformly in a 100 km × 100 km square
 * around Berlin, each with a label (surname first, so that a prefix of the label is a prefix of
 * a word too), and data fields kind, speed, fuel (three decimals: `fuel<0.01` holds for about
 * 1%) and active; then the moves of random updates and the centres of queries. All from fixed
 * seeds, generated once, so each system writes and asks exactly the same.
 */
import { mulberry32 } from './bench-random.js';

const centreLon = 13.4;
const centreLat = 52.5;
const metresPerDegreeLat = 110_574;
const metresPerDegreeLon = 111_320 * Math.cos((centreLat * Math.PI) / 180);
const halfLon = 50_000 / metresPerDegreeLon;
const halfLat = 50_000 / metresPerDegreeLat;

export const kinds = ['truck', 'van', 'car', 'bike'] as const;
const firstNames = ['Anna', 'Ben', 'Clara', 'David', 'Emma', 'Felix', 'Greta', 'Hugo', 'Ida', 'Jonas', 'Karla', 'Leon', 'Mia', 'Noah', 'Olga', 'Paul', 'Quinn', 'Rosa', 'Sven', 'Tilda', 'Uwe', 'Vera', 'Wim', 'Xenia', 'Yusuf', 'Zoë', 'Ahmed', 'Björn', 'Chiara', 'Dörte', 'Elif', 'František', 'Gül', 'Hanna', 'Ilse', 'Jürgen', 'Kemal', 'Lena', 'Mehmet', 'Nina'];
const stems = ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz', 'Hoffmann'];
const suffixes = ['', 'son', 'berg', 'mann', 'feld', 'ström', 'dorf', 'hausen', 'bach', 'stein', 'thal', 'wald', 'brück', 'hof', 'burg', 'heim', 'kamp', 'rode', 'see', 'ow'];
/** 200 surnames: each stem alone and with 19 suffixes, so a stem is the prefix of a tenth of all labels. */
const surnames = suffixes.flatMap((suffix) => stems.map((stem) => `${stem}${suffix}`));

/** The prefix the common-prefix search asks for: the first word of about 10% of the labels. */
export const commonPrefix = 'müller';

export interface PeerObjects {
  count: number;
  lon: Float64Array;
  lat: Float64Array;
  speed: Uint8Array;
  fuel: Float64Array;
  labels: string[];
}

export const objectId = (i: number): string => `obj-${i}`;
export const kindOf = (i: number): string => kinds[i % kinds.length] as string;
export const activeOf = (i: number): boolean => i % 10 !== 0;

/** Coordinates of the wire: six decimals (about 0.1 m), the same text for every system. */
export const coord = (value: number): string => value.toFixed(6);

export function generateObjects(count: number, seed = 20_261_128): PeerObjects {
  const rnd = mulberry32(seed);
  const objects: PeerObjects = {
    count,
    lon: new Float64Array(count),
    lat: new Float64Array(count),
    speed: new Uint8Array(count),
    fuel: new Float64Array(count),
    labels: new Array<string>(count),
  };
  for (let i = 0; i < count; i++) {
    objects.lon[i] = centreLon + (rnd() * 2 - 1) * halfLon;
    objects.lat[i] = centreLat + (rnd() * 2 - 1) * halfLat;
    objects.speed[i] = Math.floor(rnd() * 121);
    objects.fuel[i] = Math.round(rnd() * 1000) / 1000;
    objects.labels[i] = `${surnames[Math.floor(rnd() * surnames.length)] as string} ${firstNames[Math.floor(rnd() * firstNames.length)] as string}`;
  }
  return objects;
}

/** Updates of existing objects: which object, and where it is then. */
export interface PeerUpdates {
  index: Uint32Array;
  lon: Float64Array;
  lat: Float64Array;
}

/**
 * `count` updates of random objects, each moving up to 30 m from where the last update (or the
 * ingest) put it; `objects` is moved along, so later sequences continue from there.
 */
export function generateUpdates(objects: PeerObjects, count: number, seed: number): PeerUpdates {
  const rnd = mulberry32(seed);
  const updates: PeerUpdates = { index: new Uint32Array(count), lon: new Float64Array(count), lat: new Float64Array(count) };
  const stepLon = 30 / metresPerDegreeLon;
  const stepLat = 30 / metresPerDegreeLat;
  for (let k = 0; k < count; k++) {
    const i = Math.floor(rnd() * objects.count);
    const lon = (objects.lon[i] as number) + (rnd() * 2 - 1) * stepLon;
    const lat = (objects.lat[i] as number) + (rnd() * 2 - 1) * stepLat;
    objects.lon[i] = lon;
    objects.lat[i] = lat;
    updates.index[k] = i;
    updates.lon[k] = lon;
    updates.lat[k] = lat;
  }
  return updates;
}

/** Query centres well inside the square (so a 1 km circle lies wholly in it). */
export function generateCentres(count: number, seed: number): { lon: number; lat: number }[] {
  const rnd = mulberry32(seed);
  return Array.from({ length: count }, () => ({
    lon: centreLon + (rnd() * 2 - 1) * halfLon * 0.9,
    lat: centreLat + (rnd() * 2 - 1) * halfLat * 0.9,
  }));
}
