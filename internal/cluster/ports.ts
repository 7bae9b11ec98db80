/**
 * The ports of a cluster on one machine, laid out from one base port:
 *
 * | port | what |
 * |---|---|
 * | base | HAProxy: HTTP and WebSocket (clients connect here) |
 * | base + 1 | HAProxy: v1 TCP |
 * | base + 2 | nats-server (clients) |
 * | base + 3 | HAProxy statistics page |
 * | base + 10 + 2i, base + 11 + 2i | API process i (from 0): HTTP, TCP |
 *
 * Base 0 takes free ephemeral ports instead (tests).
 */
import { createServer } from 'node:net';

export interface PortPlan {
  httpPort: number;
  tcpPort: number;
  natsPort: number;
  statsPort: number;
  apis: { httpPort: number; tcpPort: number }[];
}

export const defaultBasePort = 9080;
export const maxApis = 32;

export function portPlan(base: number, apis: number): PortPlan {
  if (!Number.isInteger(apis) || apis < 1 || apis > maxApis) throw new RangeError(`the number of API processes must be 1..${maxApis}, got ${apis}`);
  const last = base + 11 + 2 * (apis - 1);
  if (!Number.isInteger(base) || base < 1 || last > 65535) {
    throw new RangeError(`the base port must leave room for ${apis} API processes (1..${65535 - 11 - 2 * (apis - 1)}), got ${base}`);
  }
  return {
    httpPort: base,
    tcpPort: base + 1,
    natsPort: base + 2,
    statsPort: base + 3,
    apis: Array.from({ length: apis }, (_, i) => ({ httpPort: base + 10 + 2 * i, tcpPort: base + 11 + 2 * i })),
  };
}

/** One free port of 127.0.0.1 (free when asked; another program could take it before it is used). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A plan of free ephemeral ports, all distinct. */
export async function freePortPlan(apis: number, host = '127.0.0.1'): Promise<PortPlan> {
  portPlan(defaultBasePort, apis); // validates `apis`
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    for (;;) {
      const port = await freePort(host);
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  const plan: PortPlan = { httpPort: await next(), tcpPort: await next(), natsPort: await next(), statsPort: await next(), apis: [] };
  for (let i = 0; i < apis; i++) plan.apis.push({ httpPort: await next(), tcpPort: await next() });
  return plan;
}
