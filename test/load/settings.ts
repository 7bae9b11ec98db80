/**
 * What every load script reads from the environment (k6 `-e NAME=value` or the process env):
 *   LOCUS_URL      the HTTP/WebSocket Service, e.g. http://localhost:8080
 *   LOCUS_TCP      the TCP Service as host:port, e.g. localhost:7070
 *   LOCUS_TOKEN    a token of the realm (the opaque token of a Realm's credentials Secret)
 *   LOCUS_REALM    the realm id
 *   LOCUS_DEVICES  devices per script (default 200), LOCUS_DURATION (default 2m)
 */
export interface Settings {
  url: string;
  wsUrl: string;
  tcpHost: string;
  tcpPort: number;
  token: string;
  realm: string;
  devices: number;
  duration: string;
}

function required(name: string): string {
  const value = __ENV[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set (k6 run -e ${name}=...)`);
  return value;
}

export function settings(): Settings {
  const url = (__ENV.LOCUS_URL ?? 'http://localhost:8080').replace(/\/$/, '');
  const [tcpHost = 'localhost', tcpPort = '7070'] = (__ENV.LOCUS_TCP ?? 'localhost:7070').split(':');
  return {
    url,
    wsUrl: `${url.replace(/^http/, 'ws')}/v1/ws`,
    tcpHost,
    tcpPort: Number(tcpPort),
    token: required('LOCUS_TOKEN'),
    realm: required('LOCUS_REALM'),
    devices: Number(__ENV.LOCUS_DEVICES ?? 200),
    duration: __ENV.LOCUS_DURATION ?? '2m',
  };
}

/** A device's next fix: a small random walk around a start point picked from its number. */
export function fix(device: number, step: number): { lon: number; lat: number; tim: string } {
  const lon = 13.4 + ((device * 7919) % 1000) / 10_000 + Math.sin(step / 10) / 1000;
  const lat = 52.5 + ((device * 104_729) % 1000) / 10_000 + Math.cos(step / 10) / 1000;
  return { lon, lat, tim: new Date().toISOString() };
}
