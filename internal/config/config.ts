/**
 * One typed configuration, read from environment variables and `locus serve` flags
 * (a flag wins over its variable). An invalid value stops start-up with a message
 * naming the variable.
 */
import { storeUrlProblem } from '../store/store-url.js';
import { acceptedBuses, busUrlProblem } from '../events/open-bus.js';
import { parseAllowList } from '../instructions/delivery/address-ranges.js';

export interface Config {
  host: string;
  httpPort: number;
  tcpPort: number;
  /**
   * `sqlite:<path>` (embedded; `sqlite::memory:` for a throwaway store), or
   * `mongodb://…` / `mongodb+srv://…` (cluster mode; store/store-url.ts).
   */
  store: string;
  /** `local` (one process) or `nats://host:4222[,…]` / `tls://…` (cluster mode): events/open-bus.ts. */
  bus: string;
  adminToken: string | null;
  maxBodyBytes: number;
  maxBulk: number;
  maxPage: number;
  maxVertices: number;
  maxFilterConditions: number;
  /** Requests per second per token (token bucket refill rate). */
  rateLimit: number;
  /** Bucket size: how many requests a token may send at once. */
  rateBurst: number;
  logLevel: string;
  /** Create realm `demo` and print a token when the store holds no realm. */
  demoRealm: boolean;
  shutdownTimeoutMs: number;
  /** Largest v1 WebSocket message or TCP line, in bytes. */
  maxMessageBytes: number;
  /** Open v1 WebSocket plus TCP connections; more are refused. */
  maxConnections: number;
  /** Open sockets of the HTTP listener (REST, /v1/http, WebSockets); more are refused with 503. */
  maxHttpConnections: number;
  /** Time a v1 connection has to authenticate. */
  handshakeTimeoutMs: number;
  /** A v1 connection that sends nothing for this long is closed; 0 never closes. */
  idleTimeoutMs: number;
  /** Bytes a v1 connection may have waiting to be sent before its events are dropped. */
  sendBufferBytes: number;
  /** How long a v1 connection may stay over its send buffer before it is closed. */
  slowConsumerMs: number;
  /** How often an open v1 connection checks that its token is still valid (it also does at every message). */
  tokenRecheckMs: number;
  /** Failed authentications per second per source address (a token bucket), and its size. */
  authFailureRate: number;
  authFailureBurst: number;
  /** Actions in one v1 message; a longer message is refused whole (`too_large`). */
  maxActions: number;
  /** A fix dated more than this many seconds ahead of the server clock is rejected. */
  maxFutureSkewS: number;
  /** A TCP line begun must end within this time (a stalled partial line closes the connection). */
  partialTimeoutMs: number;
  /** HTTP: time to receive a request's headers, and the whole request. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Origins browsers may call the HTTP API from (`*`: any); empty: CORS off. */
  corsOrigins: string[];
  /** A cookie whose value is taken as the token on REST v2 and `/v1/http`; null: cookies are not read. */
  authCookieName: string | null;
  /**
   * The default tenant's JWT signing secret (HS256; its UTF-8 bytes are the HMAC key): JWTs
   * without a `kid` header are checked with it. Null: such JWTs are refused (`signing key not found`).
   */
  jwtSecret: string | null;
  /** GET /metrics and the instrumentation behind it (docs/operations.md "Metrics"); false: neither exists. */
  metrics: boolean;
  /** The `realm` label on the per-realm series; false: those series have no realm label. */
  metricsRealmLabel: boolean;
  /** Distinct realms a process labels; past them the label value is `_other`. */
  metricsMaxRealms: number;
  /** Longest HiveScript source of an instruction, in characters. */
  instructionMaxSourceChars: number;
  /** Most instructions one realm holds. */
  instructionMaxPerRealm: number;
  /** This process's name in instruction leases (docs/instructions.md "How instructions run"); null: host name, pid and a random suffix. */
  processId: string | null;
  /** How long an instruction lease lasts unrenewed: a dead holder's realms are taken over within it. */
  instructionLeaseTtlMs: number;
  /** How often a process renews its instruction leases and tries to take free ones. */
  instructionLeaseRenewMs: number;
  /** A write made at this instruction depth (or deeper) triggers no instruction. */
  instructionMaxDepth: number;
  /** How often the holder re-evaluates every instruction over its realm and fires the differences. */
  instructionRepairMs: number;
  /** Evaluation time one change batch may take; a slower batch is logged and counts as a failure of its slowest instruction. */
  instructionBatchMs: number;
  /** Consecutive failures (actions or evaluation) after which an instruction is suspended. */
  instructionMaxFailures: number;
  /** Entries an instruction's `when` set may hold; more suspends it. */
  instructionMaxEntries: number;
  /**
   * Addresses, CIDRs and host names sendToUrl may reach although they are loopback, link-local,
   * private or otherwise special (instructions/delivery/address-ranges.ts parseAllowList).
   */
  sendToUrlAllow: string[];
  /** One sendToUrl attempt, from connecting to the answer's status line. */
  sendToUrlTimeoutMs: number;
  /** Attempts after the first, on network errors, timeouts, 5xx and 429. */
  sendToUrlRetries: number;
  /** sendToUrl deliveries waiting or under way per realm; more are dropped. */
  sendToUrlQueue: number;
  /** sendToUrl deliveries under way at once per realm. */
  sendToUrlConcurrency: number;
  /** Instruction log events kept per realm. */
  instructionLogSize: number;
}

/** The store when LOCUS_STORE is not set; the only one whose directory start-up creates. */
export const defaultStore = 'sqlite:./data/locus.db';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

interface Setting {
  env: string;
  flag: string;
  key: keyof Config;
  kind: 'string' | 'port' | 'int' | 'bool' | 'optional-string' | 'origins' | 'allow';
  def: string | number | boolean | null | readonly string[];
  min?: number;
}

const settings: Setting[] = [
  { env: 'LOCUS_HOST', flag: 'host', key: 'host', kind: 'string', def: '0.0.0.0' },
  { env: 'LOCUS_HTTP_PORT', flag: 'http-port', key: 'httpPort', kind: 'port', def: 8080 },
  { env: 'LOCUS_TCP_PORT', flag: 'tcp-port', key: 'tcpPort', kind: 'port', def: 7070 },
  { env: 'LOCUS_STORE', flag: 'store', key: 'store', kind: 'string', def: defaultStore },
  { env: 'LOCUS_BUS', flag: 'bus', key: 'bus', kind: 'string', def: 'local' },
  { env: 'LOCUS_ADMIN_TOKEN', flag: 'admin-token', key: 'adminToken', kind: 'optional-string', def: null },
  { env: 'LOCUS_MAX_BODY_BYTES', flag: 'max-body-bytes', key: 'maxBodyBytes', kind: 'int', def: 5 * 1024 * 1024, min: 1024 },
  { env: 'LOCUS_MAX_BULK', flag: 'max-bulk', key: 'maxBulk', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_MAX_PAGE', flag: 'max-page', key: 'maxPage', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_MAX_POLYGON_VERTICES', flag: 'max-polygon-vertices', key: 'maxVertices', kind: 'int', def: 10_000, min: 3 },
  { env: 'LOCUS_MAX_FILTER_CONDITIONS', flag: 'max-filter-conditions', key: 'maxFilterConditions', kind: 'int', def: 100, min: 1 },
  { env: 'LOCUS_RATE_LIMIT', flag: 'rate-limit', key: 'rateLimit', kind: 'int', def: 1000, min: 1 },
  { env: 'LOCUS_RATE_BURST', flag: 'rate-burst', key: 'rateBurst', kind: 'int', def: 2000, min: 1 },
  { env: 'LOCUS_LOG_LEVEL', flag: 'log-level', key: 'logLevel', kind: 'string', def: 'info' },
  { env: 'LOCUS_DEMO_REALM', flag: 'demo-realm', key: 'demoRealm', kind: 'bool', def: true },
  { env: 'LOCUS_SHUTDOWN_TIMEOUT_MS', flag: 'shutdown-timeout-ms', key: 'shutdownTimeoutMs', kind: 'int', def: 10_000, min: 0 },
  { env: 'LOCUS_MAX_MESSAGE_BYTES', flag: 'max-message-bytes', key: 'maxMessageBytes', kind: 'int', def: 1024 * 1024, min: 1024 },
  { env: 'LOCUS_MAX_CONNECTIONS', flag: 'max-connections', key: 'maxConnections', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_MAX_HTTP_CONNECTIONS', flag: 'max-http-connections', key: 'maxHttpConnections', kind: 'int', def: 20_000, min: 1 },
  { env: 'LOCUS_HANDSHAKE_TIMEOUT_MS', flag: 'handshake-timeout-ms', key: 'handshakeTimeoutMs', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_IDLE_TIMEOUT_MS', flag: 'idle-timeout-ms', key: 'idleTimeoutMs', kind: 'int', def: 300_000, min: 0 },
  { env: 'LOCUS_SEND_BUFFER_BYTES', flag: 'send-buffer-bytes', key: 'sendBufferBytes', kind: 'int', def: 4 * 1024 * 1024, min: 1024 },
  { env: 'LOCUS_SLOW_CONSUMER_MS', flag: 'slow-consumer-ms', key: 'slowConsumerMs', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_TOKEN_RECHECK_MS', flag: 'token-recheck-ms', key: 'tokenRecheckMs', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_AUTH_FAILURE_RATE', flag: 'auth-failure-rate', key: 'authFailureRate', kind: 'int', def: 5, min: 1 },
  { env: 'LOCUS_AUTH_FAILURE_BURST', flag: 'auth-failure-burst', key: 'authFailureBurst', kind: 'int', def: 50, min: 1 },
  { env: 'LOCUS_MAX_ACTIONS', flag: 'max-actions', key: 'maxActions', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_MAX_FUTURE_SKEW_S', flag: 'max-future-skew-s', key: 'maxFutureSkewS', kind: 'int', def: 300, min: 0 },
  { env: 'LOCUS_PARTIAL_TIMEOUT_MS', flag: 'partial-timeout-ms', key: 'partialTimeoutMs', kind: 'int', def: 30_000, min: 1 },
  { env: 'LOCUS_HEADERS_TIMEOUT_MS', flag: 'headers-timeout-ms', key: 'headersTimeoutMs', kind: 'int', def: 20_000, min: 1 },
  { env: 'LOCUS_REQUEST_TIMEOUT_MS', flag: 'request-timeout-ms', key: 'requestTimeoutMs', kind: 'int', def: 120_000, min: 1 },
  { env: 'LOCUS_CORS_ORIGINS', flag: 'cors-origins', key: 'corsOrigins', kind: 'origins', def: [] },
  { env: 'LOCUS_AUTH_COOKIE_NAME', flag: 'auth-cookie-name', key: 'authCookieName', kind: 'optional-string', def: null },
  { env: 'LOCUS_JWT_SECRET', flag: 'jwt-secret', key: 'jwtSecret', kind: 'optional-string', def: null },
  { env: 'LOCUS_METRICS', flag: 'metrics', key: 'metrics', kind: 'bool', def: true },
  { env: 'LOCUS_METRICS_REALM_LABEL', flag: 'metrics-realm-label', key: 'metricsRealmLabel', kind: 'bool', def: true },
  { env: 'LOCUS_METRICS_MAX_REALMS', flag: 'metrics-max-realms', key: 'metricsMaxRealms', kind: 'int', def: 100, min: 1 },
  { env: 'LOCUS_INSTRUCTION_MAX_SOURCE_CHARS', flag: 'instruction-max-source-chars', key: 'instructionMaxSourceChars', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_INSTRUCTION_MAX_PER_REALM', flag: 'instruction-max-per-realm', key: 'instructionMaxPerRealm', kind: 'int', def: 1000, min: 1 },
  { env: 'LOCUS_PROCESS_ID', flag: 'process-id', key: 'processId', kind: 'optional-string', def: null },
  { env: 'LOCUS_INSTRUCTION_LEASE_TTL_MS', flag: 'instruction-lease-ttl-ms', key: 'instructionLeaseTtlMs', kind: 'int', def: 10_000, min: 100 },
  { env: 'LOCUS_INSTRUCTION_LEASE_RENEW_MS', flag: 'instruction-lease-renew-ms', key: 'instructionLeaseRenewMs', kind: 'int', def: 2000, min: 50 },
  { env: 'LOCUS_INSTRUCTION_MAX_DEPTH', flag: 'instruction-max-depth', key: 'instructionMaxDepth', kind: 'int', def: 8, min: 1 },
  { env: 'LOCUS_INSTRUCTION_REPAIR_MS', flag: 'instruction-repair-ms', key: 'instructionRepairMs', kind: 'int', def: 60_000, min: 100 },
  { env: 'LOCUS_INSTRUCTION_BATCH_MS', flag: 'instruction-batch-ms', key: 'instructionBatchMs', kind: 'int', def: 1000, min: 1 },
  { env: 'LOCUS_INSTRUCTION_MAX_FAILURES', flag: 'instruction-max-failures', key: 'instructionMaxFailures', kind: 'int', def: 5, min: 1 },
  { env: 'LOCUS_INSTRUCTION_MAX_ENTRIES', flag: 'instruction-max-entries', key: 'instructionMaxEntries', kind: 'int', def: 10_000, min: 1 },
  { env: 'LOCUS_SEND_TO_URL_ALLOW', flag: 'send-to-url-allow', key: 'sendToUrlAllow', kind: 'allow', def: [] },
  { env: 'LOCUS_SEND_TO_URL_TIMEOUT_MS', flag: 'send-to-url-timeout-ms', key: 'sendToUrlTimeoutMs', kind: 'int', def: 5000, min: 1 },
  { env: 'LOCUS_SEND_TO_URL_RETRIES', flag: 'send-to-url-retries', key: 'sendToUrlRetries', kind: 'int', def: 3, min: 0 },
  { env: 'LOCUS_SEND_TO_URL_QUEUE', flag: 'send-to-url-queue', key: 'sendToUrlQueue', kind: 'int', def: 1000, min: 1 },
  { env: 'LOCUS_SEND_TO_URL_CONCURRENCY', flag: 'send-to-url-concurrency', key: 'sendToUrlConcurrency', kind: 'int', def: 4, min: 1 },
  { env: 'LOCUS_INSTRUCTION_LOG_SIZE', flag: 'instruction-log-size', key: 'instructionLogSize', kind: 'int', def: 1000, min: 1 },
];

/** An origin as a browser sends it: scheme, host and optional port, no path. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i;

function parseOrigins(raw: string, source: string): string[] {
  const origins = raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  for (const origin of origins) {
    if (origin !== '*' && !ORIGIN.test(origin)) {
      throw new ConfigError(`${source} must list origins such as https://app.example.com (or *), separated by commas; got "${origin}"`);
    }
  }
  return origins;
}

const logLevels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function parseValue(s: Setting, raw: string, source: string): string | number | boolean | null | string[] {
  switch (s.kind) {
    case 'origins':
      return parseOrigins(raw, source);
    case 'allow': {
      const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
      try {
        parseAllowList(entries);
      } catch (err) {
        throw new ConfigError(`${source} must list addresses, CIDRs and host names separated by commas: ${(err as Error).message}`);
      }
      return entries;
    }
    case 'string':
    case 'optional-string':
      if (raw === '') throw new ConfigError(`${source} must not be empty`);
      return raw;
    case 'bool':
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw new ConfigError(`${source} must be true or false, got "${raw}"`);
    case 'port':
    case 'int': {
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${source} must be a non-negative integer, got "${raw}"`);
      const n = Number(raw);
      if (s.kind === 'port' && n > 65535) throw new ConfigError(`${source} must be a port number 0..65535, got ${raw}`);
      if (s.min !== undefined && n < s.min) throw new ConfigError(`${source} must be at least ${s.min}, got ${raw}`);
      if (!Number.isSafeInteger(n)) throw new ConfigError(`${source} is too large`);
      return n;
    }
  }
}

/** Parses `--name value` and `--name=value` flags. */
function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    } else {
      const value = argv[i + 1];
      if (value === undefined) throw new ConfigError(`flag ${arg} needs a value`);
      flags.set(arg.slice(2), value);
      i++;
    }
  }
  return flags;
}

export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[] = []): Config {
  const flags = parseFlags(argv);
  const known = new Set(settings.map((s) => s.flag));
  for (const name of flags.keys()) {
    if (!known.has(name)) throw new ConfigError(`unknown flag --${name}`);
  }
  const out: Record<string, unknown> = {};
  for (const s of settings) {
    const flag = flags.get(s.flag);
    const fromEnv = env[s.env];
    if (flag !== undefined) out[s.key] = parseValue(s, flag, `--${s.flag}`);
    else if (fromEnv !== undefined) out[s.key] = parseValue(s, fromEnv, s.env);
    else out[s.key] = typeof s.def === 'object' && s.def !== null ? [...s.def] : s.def;
  }
  const config = out as unknown as Config;
  if (!logLevels.has(config.logLevel)) {
    throw new ConfigError(`LOCUS_LOG_LEVEL must be one of ${[...logLevels].join(', ')}, got "${config.logLevel}"`);
  }
  const storeProblem = storeUrlProblem(config.store);
  if (storeProblem !== null) throw new ConfigError(storeProblem);
  const busProblem = busUrlProblem(config.bus);
  if (busProblem !== null) throw new ConfigError(`LOCUS_BUS must be ${acceptedBuses}: ${busProblem}`);
  // Node's HTTP server refuses a headers timeout longer than its request timeout.
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError(
      `LOCUS_HEADERS_TIMEOUT_MS=${config.headersTimeoutMs} must not exceed LOCUS_REQUEST_TIMEOUT_MS=${config.requestTimeoutMs}`,
    );
  }
  // RFC 6265: a cookie name is an HTTP token.
  if (config.authCookieName !== null && !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(config.authCookieName)) {
    throw new ConfigError(`LOCUS_AUTH_COOKIE_NAME must be a cookie name (letters, digits and !#$%&'*+-.^_\`|~), got "${config.authCookieName}"`);
  }
  // A lease renewed no more often than it expires would lapse between renewals.
  if (config.instructionLeaseRenewMs * 2 > config.instructionLeaseTtlMs) {
    throw new ConfigError(
      `LOCUS_INSTRUCTION_LEASE_RENEW_MS=${config.instructionLeaseRenewMs} must be at most half of LOCUS_INSTRUCTION_LEASE_TTL_MS=${config.instructionLeaseTtlMs}`,
    );
  }
  if (config.adminToken !== null && config.adminToken.length < 16) {
    throw new ConfigError('LOCUS_ADMIN_TOKEN must be at least 16 characters');
  }
  return config;
}

/** The configuration tests start from: ephemeral ports, defaults elsewhere. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), httpPort: 0, tcpPort: 0, host: '127.0.0.1', logLevel: 'silent', demoRealm: false, ...overrides };
}

/** Every setting with its flag, variable and default, for `locus help serve`. */
export function settingList(): { flag: string; env: string; def: string }[] {
  return settings.map((s) => ({
    flag: s.flag,
    env: s.env,
    def: s.def === null || (typeof s.def === 'object' && s.def.length === 0) ? 'unset' : String(s.def),
  }));
}
