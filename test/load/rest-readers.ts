/**
 * REST readers: dashboards and back offices reading the realm while devices write it. Each
 * virtual user lists the objects in a 2 km circle, reads one object, searches by label prefix,
 * and pauses. Thresholds: under 1% failed requests, p95 under 300 ms per kind of request.
 *   k6 run -e LOCUS_URL=http://... -e LOCUS_TOKEN=... -e LOCUS_REALM=... test/load/rest-readers.ts
 */
import { check, sleep } from 'k6';
import http from 'k6/http';
import { fix, settings } from './settings.ts';

const config = settings();
const headers = { authorization: `Bearer ${config.token}` };

export const options = {
  scenarios: {
    readers: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', duration: config.duration, preAllocatedVUs: 20, maxVUs: 100 },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    'http_req_duration{kind:list}': ['p(95)<300'],
    'http_req_duration{kind:get}': ['p(95)<300'],
    'http_req_duration{kind:search}': ['p(95)<300'],
  },
};

export default function (): void {
  const around = fix(Math.floor(Math.random() * config.devices) + 1, 0);
  const shape = encodeURIComponent(JSON.stringify({ cx: around.lon, cy: around.lat, r: 2000 }));
  const list = http.get(`${config.url}/v2/realm/${config.realm}/object?limit=100&shape=${shape}`, { headers, tags: { kind: 'list' } });
  check(list, { 'list answered': (r) => r.status === 200 });
  const id = `ws-device-${Math.floor(Math.random() * config.devices) + 1}`;
  const one = http.get(`${config.url}/v2/realm/${config.realm}/object/${id}`, { headers, tags: { kind: 'get' } });
  check(one, { 'object read (or not there yet)': (r) => r.status === 200 || r.status === 404 });
  const search = http.get(`${config.url}/v2/realm/${config.realm}/search?searchString=device&maxObjectResults=20&maxAreaResults=0`, { headers, tags: { kind: 'search' } });
  check(search, { 'search answered': (r) => r.status === 200 });
  sleep(0.1);
}
