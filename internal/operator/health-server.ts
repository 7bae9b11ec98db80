/** The operator's HTTP endpoints: /healthz (the process runs), /readyz (watches synced, store up), /metrics. */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  /** Null when ready, else why not. */
  notReady(): Promise<string | null>;
  registry: Registry;
}

export function startHealthServer(host: string, port: number, checks: HealthChecks): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz') {
      checks.notReady().then(
        (why) => (why === null ? send(200, 'ok\n') : send(503, `not ready: ${why}\n`)),
        () => send(503, 'not ready\n'),
      );
      return;
    }
    if (path === '/metrics') {
      checks.registry.metrics().then(
        (text) => send(200, text, checks.registry.contentType),
        () => send(500, 'metrics unavailable\n'),
      );
      return;
    }
    send(404, 'not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
