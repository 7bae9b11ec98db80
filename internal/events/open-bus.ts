/**
 * Opens the event bus a `LOCUS_BUS` value names: one registry, keyed by scheme, that the
 * server and every other caller use.
 *
 *   local                                  the in-process bus (embedded mode, one process)
 *   nats://host:4222[,nats://host2:4222]   NATS (cluster mode); `tls://host:4222` for TLS
 *
 * Adapters load on demand: embedded mode never loads the NATS client.
 */
import type { BusTracing } from './bus-tracing.js';
import { LocalEventBus } from './local-bus.js';
import type { BusLog } from './nats-bus.js';
import type { EventBus } from './port.js';

export interface OpenBusOptions {
  /** Hears of a handler that threw or a message that could not be read. */
  onError?: (err: unknown) => void;
  log?: BusLog;
  /** The connection name a NATS server shows. */
  name?: string;
  /** Carries trace context from publish to delivery; absent while tracing is off. */
  tracing?: BusTracing;
  /** Metrics: each realm's events delivered here, with the seconds since they were published. */
  onDelivered?: (lagSeconds: number) => void;
}

interface BusScheme {
  /** How the scheme is written in the accepted-values message. */
  example: string;
  /** Null when `url` is this scheme's and valid; a problem when it is this scheme's but invalid; undefined when not this scheme's. */
  check(url: string): string | null | undefined;
  open(url: string, options: OpenBusOptions): Promise<EventBus>;
}

/** `nats://`/`tls://` servers, comma-separated. */
function natsServers(url: string): string[] {
  return url.split(',').map((s) => s.trim());
}

/**
 * The servers without credentials, and the credentials (the NATS client ignores them in URLs):
 * `nats://user:pass@host` gives user and password, `nats://token@host` a token.
 */
export function natsConnection(url: string): { servers: string[]; user?: string; pass?: string; token?: string } {
  let credentials: { user?: string; pass?: string; token?: string } = {};
  const servers = natsServers(url).map((server) => {
    const parsed = new URL(server);
    if (parsed.username !== '' && credentials.user === undefined && credentials.token === undefined) {
      const name = decodeURIComponent(parsed.username);
      credentials = parsed.password === '' ? { token: name } : { user: name, pass: decodeURIComponent(parsed.password) };
    }
    return `${parsed.protocol}//${parsed.host}`;
  });
  return { servers, ...credentials };
}

const schemes: BusScheme[] = [
  {
    example: 'local',
    check: (url) => (url === 'local' ? null : undefined),
    open: (_url, options) =>
      Promise.resolve(
        new LocalEventBus(options.onError, {
          ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
          ...(options.onDelivered === undefined ? {} : { onDelivered: options.onDelivered }),
        }),
      ),
  },
  {
    example: 'nats://host:4222[,nats://host2:4222] (or tls://host:4222)',
    check: (url) => {
      if (!/^(nats|tls):\/\//.test(url)) return undefined;
      for (const given of natsServers(url)) {
        // Messages never show credentials.
        const server = given.replace(/\/\/[^@/]*@/, '//***@');
        let parsed: URL;
        try {
          parsed = new URL(given);
        } catch {
          return `"${server}" is not a URL`;
        }
        if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') return `"${server}" must start with nats:// or tls://`;
        if (parsed.hostname === '') return `"${server}" names no host`;
        if (parsed.pathname !== '' && parsed.pathname !== '/') return `"${server}" must not have a path`;
        if (parsed.search !== '' || parsed.hash !== '') return `"${server}" must not have a query or fragment`;
      }
      return null;
    },
    open: async (url, options) => {
      const { openNatsBus } = await import('./nats-bus.js');
      return openNatsBus({
        ...natsConnection(url),
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.onError === undefined ? {} : { onError: options.onError }),
        ...(options.log === undefined ? {} : { log: options.log }),
        ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
        ...(options.onDelivered === undefined ? {} : { onDelivered: options.onDelivered }),
      });
    },
  },
];

/** What LOCUS_BUS accepts, for error messages. */
export const acceptedBuses: string = schemes.map((s) => s.example).join(', or ');

/** Null when `url` names a bus openBus can open, else what is wrong with it. */
export function busUrlProblem(url: string): string | null {
  for (const scheme of schemes) {
    const problem = scheme.check(url);
    if (problem !== undefined) return problem;
  }
  return `"${url}" is not a supported bus`;
}

/** Opens the bus `url` names; rejects when it names none, or (NATS) when no server answers. */
export async function openBus(url: string, options: OpenBusOptions = {}): Promise<EventBus> {
  for (const scheme of schemes) {
    const problem = scheme.check(url);
    if (problem === undefined) continue;
    if (problem !== null) throw new Error(`LOCUS_BUS must be ${acceptedBuses}: ${problem}`);
    return scheme.open(url, options);
  }
  throw new Error(`LOCUS_BUS must be ${acceptedBuses}: ${busUrlProblem(url) ?? url}`);
}
