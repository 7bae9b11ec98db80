/** The cluster launcher's pure parts: the HAProxy configuration, HAProxy's stat parsing, the port layout and the options. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterArgsError, parseClusterArgs } from '../../internal/cluster/cluster-args.js';
import { haproxyConfig, parseShowStat, type HaproxyPlan } from '../../internal/cluster/haproxy-config.js';
import { freePortPlan, portPlan } from '../../internal/cluster/ports.js';

const plan: HaproxyPlan = {
  httpPort: 9080,
  tcpPort: 9081,
  statsPort: 9083,
  statsSocket: '/tmp/x/haproxy.sock',
  bindHost: '127.0.0.1',
  checkIntervalMs: 1000,
  backends: [
    { name: 'api-1', host: '127.0.0.1', httpPort: 9090, tcpPort: 9091 },
    { name: 'api-2', host: '127.0.0.1', httpPort: 9092, tcpPort: 9093 },
  ],
};

/** The lines of one section (`backend api_tcp`), trimmed, up to the next blank line. */
function section(config: string, header: string): string[] {
  const lines = config.split('\n');
  const start = lines.indexOf(header);
  assert.ok(start >= 0, `no section ${header}`);
  const end = lines.indexOf('', start);
  return lines.slice(start + 1, end < 0 ? undefined : end).map((line) => line.trim());
}

describe('HAProxy configuration of a cluster', () => {
  const config = haproxyConfig(plan);

  it('serves HTTP and WebSocket on one port, checked through /readyz, round robin over every process', () => {
    assert.deepEqual(section(config, 'frontend http_in').slice(0, 2), ['mode http', 'bind 127.0.0.1:9080']);
    const backend = section(config, 'backend api_http');
    assert.ok(backend.includes('option httpchk GET /readyz'));
    assert.ok(backend.includes('http-check expect status 200'));
    assert.ok(backend.includes('server api-1 127.0.0.1:9090 check'));
    assert.ok(backend.includes('server api-2 127.0.0.1:9092 check'));
  });

  it('keeps idle WebSocket and TCP tunnels open longer than the server idle timeout (5 min)', () => {
    assert.ok(section(config, 'defaults').includes('timeout tunnel 1h'));
  });

  it('balances v1 TCP by least connections, each port checked through its process /readyz', () => {
    assert.deepEqual(section(config, 'frontend tcp_in').slice(0, 2), ['mode tcp', 'bind 127.0.0.1:9081']);
    const backend = section(config, 'backend api_tcp');
    assert.ok(backend.includes('balance leastconn'));
    assert.ok(backend.includes('option httpchk GET /readyz'));
    assert.ok(backend.includes('server api-1 127.0.0.1:9091 check port 9090'));
    assert.ok(backend.includes('server api-2 127.0.0.1:9093 check port 9092'));
  });

  it('sends a connection a dead process refused to another one', () => {
    const defaults = section(config, 'defaults');
    assert.ok(defaults.includes('option redispatch'));
    assert.ok(defaults.some((line) => /^retries [1-9]$/.test(line)));
  });

  it('has the runtime socket, and a stats page only when asked', () => {
    assert.ok(section(config, 'global').includes('stats socket /tmp/x/haproxy.sock mode 600 level admin'));
    assert.deepEqual(section(config, 'frontend stats').slice(0, 2), ['mode http', 'bind 127.0.0.1:9083']);
    assert.ok(!haproxyConfig({ ...plan, statsPort: null }).includes('frontend stats'));
  });

  it('refuses a cluster without API processes', () => {
    assert.throws(() => haproxyConfig({ ...plan, backends: [] }), /at least one API process/);
  });
});

describe('HAProxy show stat', () => {
  it('gives each server state, leaving out frontend and backend rows', () => {
    const csv = [
      '# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight',
      'http_in,FRONTEND,,,0,1,20000,1,0,0,0,0,0,,,,,OPEN,',
      'api_http,api-1,0,0,0,1,,1,0,0,,0,,0,0,0,0,UP,1',
      'api_http,api-2,0,0,0,1,,1,0,0,,0,,0,0,0,0,DOWN,1',
      'api_http,BACKEND,0,0,0,1,2000,1,0,0,0,0,,0,0,0,0,UP,1',
      'api_tcp,api-1,0,0,0,1,,1,0,0,,0,,0,0,0,0,UP 1/2,1',
      '',
    ].join('\n');
    assert.deepEqual(parseShowStat(csv), [
      { backend: 'api_http', server: 'api-1', status: 'UP' },
      { backend: 'api_http', server: 'api-2', status: 'DOWN' },
      { backend: 'api_tcp', server: 'api-1', status: 'UP 1/2' },
    ]);
  });

  it('refuses an answer that is not the stat CSV', () => {
    assert.throws(() => parseShowStat('Unknown command\n'), /unexpected answer/);
  });
});

describe('cluster ports', () => {
  it('lays every port out from the base', () => {
    assert.deepEqual(portPlan(9080, 3), {
      httpPort: 9080,
      tcpPort: 9081,
      natsPort: 9082,
      statsPort: 9083,
      apis: [
        { httpPort: 9090, tcpPort: 9091 },
        { httpPort: 9092, tcpPort: 9093 },
        { httpPort: 9094, tcpPort: 9095 },
      ],
    });
  });

  it('refuses a base that leaves no room, and a count out of range', () => {
    assert.throws(() => portPlan(65530, 3), RangeError);
    assert.throws(() => portPlan(9080, 0), RangeError);
    assert.throws(() => portPlan(9080, 33), RangeError);
  });

  it('takes distinct free ports for base 0', async () => {
    const free = await freePortPlan(3);
    const all = [free.httpPort, free.tcpPort, free.natsPort, free.statsPort, ...free.apis.flatMap((a) => [a.httpPort, a.tcpPort])];
    assert.equal(new Set(all).size, 10);
    assert.ok(all.every((port) => port > 0 && port < 65536));
  });
});

describe('npm run cluster options', () => {
  it('defaults to three processes from port 9080 in a temporary directory', () => {
    assert.deepEqual(parseClusterArgs([], {}), {
      apis: 3,
      basePort: 9080,
      dataDir: null,
      keepData: false,
      store: null,
      install: true,
      quiet: false,
      help: false,
    });
  });

  it('reads variables, and flags win over them', () => {
    const env = { LOCUS_CLUSTER_APIS: '2', LOCUS_CLUSTER_BASE_PORT: '10000', LOCUS_CLUSTER_DIR: '/srv/c', LOCUS_CLUSTER_STORE: 'mongodb://db:27017' };
    const args = parseClusterArgs(['--apis', '4', '--base-port=11000', '--keep', '--quiet'], env);
    assert.equal(args.apis, 4);
    assert.equal(args.basePort, 11000);
    assert.equal(args.dataDir, '/srv/c');
    assert.equal(args.store, 'mongodb://db:27017');
    assert.equal(args.keepData, true);
    assert.equal(args.quiet, true);
  });

  it('refuses bad values with a message naming the option', () => {
    assert.throws(() => parseClusterArgs(['--apis', 'three'], {}), (err: unknown) => err instanceof ClusterArgsError && /--apis/.test(err.message));
    assert.throws(() => parseClusterArgs(['--apis', '0'], {}), /--apis must be 1\.\.32/);
    assert.throws(() => parseClusterArgs(['--base-port', '65530'], {}), /no room/);
    assert.throws(() => parseClusterArgs(['--store'], {}), /--store needs a value/);
    assert.throws(() => parseClusterArgs(['--what'], {}), /unknown option --what/);
    assert.throws(() => parseClusterArgs([], { LOCUS_CLUSTER_APIS: '-1' }), /LOCUS_CLUSTER_APIS/);
  });
});
