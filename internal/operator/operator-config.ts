/**
 * The operator's configuration, from environment variables (the Helm chart sets them; see
 * docs/operations.md "Kubernetes operator"). An invalid value stops start-up with a message
 * naming the variable, as the server's configuration does (config/config.ts). The Kubernetes
 * connection itself comes from KUBECONFIG or, in a Pod, the service account.
 */
import { hostname } from 'node:os';
import { ConfigError, defaultStore } from '../config/config.js';
import { acceptedBuses, busUrlProblem } from '../events/open-bus.js';
import { storeUrlProblem } from '../store/store-url.js';

export interface OperatorConfig {
  store: string;
  bus: string;
  host: string;
  port: number;
  /** Namespaces whose Realms are reconciled; empty: all. */
  namespaces: string[];
  /** LOCUS_OPERATOR_LEASE_NAMESPACE; null: from the Kubernetes connection (leaseNamespaceFor). */
  leaseNamespace: string | null;
  leaseName: string;
  identity: string;
  logLevel: string;
  workers: number;
  resyncMs: number;
  leaseDurationS: number;
  renewDeadlineS: number;
  retryPeriodS: number;
  /** How long a rotated-out tenant signing key is still accepted. */
  keyGraceMs: number;
  /** How long a superseded token or realm-bound key (its credentials Secret minted again) is still accepted. */
  credentialsGraceMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  shutdownTimeoutMs: number;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const logLevels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new ConfigError(`${name} is too large`);
  if (n < min) throw new ConfigError(`${name} must be at least ${min}, got ${raw}`);
  return n;
}

function text(env: NodeJS.ProcessEnv, name: string, def: string): string {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? def : raw.trim();
}

function namespaceName(value: string, source: string): string {
  if (value.length > 63 || !DNS_LABEL.test(value)) throw new ConfigError(`${source}: "${value.slice(0, 80)}" is not a namespace name`);
  return value;
}

/**
 * The namespace of the leader Lease: LOCUS_OPERATOR_LEASE_NAMESPACE when set; else the
 * namespace of the Kubernetes connection's context, which in a Pod (no kubeconfig) is the
 * Pod's own namespace (client-node reads the service account's namespace file) and outside a
 * cluster the kubeconfig's current context's; else `default`. With the chart's RBAC the Lease
 * must be in the release namespace, the only one where the operator may use Leases.
 */
export function leaseNamespaceFor(configured: string | null, contextNamespace: string | undefined): { namespace: string; from: string } {
  if (configured !== null) return { namespace: configured, from: 'LOCUS_OPERATOR_LEASE_NAMESPACE' };
  const context = contextNamespace?.trim() ?? '';
  if (context !== '') return { namespace: namespaceName(context, "the Kubernetes context's namespace"), from: "the Kubernetes context's namespace" };
  return { namespace: 'default', from: 'the default' };
}

export function loadOperatorConfig(env: NodeJS.ProcessEnv): OperatorConfig {
  const namespaces = (env.LOCUS_OPERATOR_NAMESPACES ?? '')
    .split(',')
    .map((ns) => ns.trim())
    .filter((ns) => ns !== '')
    .map((ns) => namespaceName(ns, 'LOCUS_OPERATOR_NAMESPACES'));
  const config: OperatorConfig = {
    store: text(env, 'LOCUS_STORE', defaultStore),
    bus: text(env, 'LOCUS_BUS', 'local'),
    host: text(env, 'LOCUS_OPERATOR_HOST', '0.0.0.0'),
    port: int(env, 'LOCUS_OPERATOR_PORT', 8081, 0),
    namespaces: [...new Set(namespaces)],
    leaseNamespace: text(env, 'LOCUS_OPERATOR_LEASE_NAMESPACE', '') === '' ? null : namespaceName(text(env, 'LOCUS_OPERATOR_LEASE_NAMESPACE', ''), 'LOCUS_OPERATOR_LEASE_NAMESPACE'),
    leaseName: 'locus-operator',
    identity: text(env, 'LOCUS_OPERATOR_IDENTITY', `${hostname()}-${process.pid}`),
    logLevel: text(env, 'LOCUS_LOG_LEVEL', 'info'),
    workers: int(env, 'LOCUS_OPERATOR_WORKERS', 4, 1),
    resyncMs: int(env, 'LOCUS_OPERATOR_RESYNC_SECONDS', 300, 1) * 1000,
    leaseDurationS: int(env, 'LOCUS_OPERATOR_LEASE_DURATION_SECONDS', 15, 1),
    renewDeadlineS: int(env, 'LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS', 10, 1),
    retryPeriodS: int(env, 'LOCUS_OPERATOR_RETRY_PERIOD_SECONDS', 2, 1),
    keyGraceMs: int(env, 'LOCUS_OPERATOR_KEY_GRACE_SECONDS', 86_400, 0) * 1000,
    credentialsGraceMs: int(env, 'LOCUS_OPERATOR_CREDENTIALS_GRACE_SECONDS', 3_600, 0) * 1000,
    backoffBaseMs: int(env, 'LOCUS_OPERATOR_BACKOFF_BASE_MS', 500, 1),
    backoffCapMs: int(env, 'LOCUS_OPERATOR_BACKOFF_CAP_MS', 300_000, 1),
    shutdownTimeoutMs: int(env, 'LOCUS_SHUTDOWN_TIMEOUT_MS', 15_000, 0),
  };
  if (config.port > 65535) throw new ConfigError(`LOCUS_OPERATOR_PORT must be a port number 0..65535, got ${config.port}`);
  if (!logLevels.has(config.logLevel)) throw new ConfigError(`LOCUS_LOG_LEVEL must be one of ${[...logLevels].join(', ')}, got "${config.logLevel}"`);
  // client-go's rule: duration > renew deadline > retry period.
  if (!(config.leaseDurationS > config.renewDeadlineS && config.renewDeadlineS > config.retryPeriodS)) {
    throw new ConfigError(
      `LOCUS_OPERATOR_LEASE_DURATION_SECONDS (${config.leaseDurationS}) must exceed LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS (${config.renewDeadlineS}), which must exceed LOCUS_OPERATOR_RETRY_PERIOD_SECONDS (${config.retryPeriodS})`,
    );
  }
  if (config.backoffCapMs < config.backoffBaseMs) throw new ConfigError('LOCUS_OPERATOR_BACKOFF_CAP_MS must be at least LOCUS_OPERATOR_BACKOFF_BASE_MS');
  const storeProblem = storeUrlProblem(config.store);
  if (storeProblem !== null) throw new ConfigError(storeProblem);
  const busProblem = busUrlProblem(config.bus);
  if (busProblem !== null) throw new ConfigError(`LOCUS_BUS must be ${acceptedBuses}: ${busProblem}`);
  return config;
}
