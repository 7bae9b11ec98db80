/**
 * Leader election through a coordination.k8s.io/v1 Lease, the way client-go's leaderelection
 * does it: every retry period a candidate tries to take the Lease (absent, released, or not
 * renewed for its duration) and the leader renews it; a leader that has not renewed within
 * the renew deadline stops leading (it may have been cut off while another took over). On
 * stop, the leader releases the Lease (empty holder) so that another replica takes over at once.
 *
 * A Lease counts as expired when its renewTime is older than its duration by this process's
 * clock, or when this process has seen it unchanged for that long (the latter holds even when
 * clocks disagree).
 */
import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { kubeError, statusOf } from './kube-client.js';

export interface LeaseSettings {
  namespace: string;
  name: string;
  identity: string;
  durationS: number;
  renewDeadlineS: number;
  retryPeriodS: number;
}

export interface LeaderCallbacks {
  /** Became leader: start working. */
  started(): void;
  /** Stopped leading (lost the Lease, or stop()): stop working; awaited before the Lease is released. */
  stopped(): Promise<void>;
}

/** The Lease calls (a seam for the adapter below). */
export interface LeaseApi {
  get(namespace: string, name: string): Promise<V1Lease | null>;
  create(namespace: string, lease: V1Lease): Promise<boolean>;
  /** False on a conflict (someone else wrote it since it was read). */
  replace(namespace: string, name: string, lease: V1Lease): Promise<boolean>;
}

/** How long a lasting Lease problem goes unrepeated in the log. */
const PROBLEM_REPEAT_MS = 5 * 60_000;

/** A failed Lease call as an Error; a 403 says which rights are missing where, and how to fix it. */
function leaseError(err: unknown, verb: 'get' | 'create' | 'update', namespace: string, name: string): Error {
  const base = kubeError(err, `${verb === 'get' ? 'reading' : verb === 'create' ? 'creating' : 'updating'} Lease ${namespace}/${name}`);
  if (statusOf(err) !== 403) return base;
  return new Error(
    `${base.message} (the operator needs get, create and update on leases.coordination.k8s.io in namespace ${namespace}; the chart grants them in its release namespace: set LOCUS_OPERATOR_LEASE_NAMESPACE, or the kubeconfig context's namespace, to it)`,
  );
}

export function leaseApi(config: KubeConfig): LeaseApi {
  const api = config.makeApiClient(CoordinationV1Api);
  return {
    async get(namespace, name) {
      try {
        return await api.readNamespacedLease({ namespace, name });
      } catch (err) {
        if (statusOf(err) === 404) return null;
        throw leaseError(err, 'get', namespace, name);
      }
    },
    async create(namespace, lease) {
      try {
        await api.createNamespacedLease({ namespace, body: lease });
        return true;
      } catch (err) {
        if (statusOf(err) === 409) return false;
        throw leaseError(err, 'create', namespace, lease.metadata?.name ?? '');
      }
    },
    async replace(namespace, name, lease) {
      try {
        await api.replaceNamespacedLease({ namespace, name, body: lease });
        return true;
      } catch (err) {
        if (err instanceof ApiException && err.code === 409) return false;
        throw leaseError(err, 'update', namespace, name);
      }
    },
  };
}

function timeOf(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string') return Date.parse(value);
  return Number.NaN;
}

export class LeaderElector {
  private leading = false;
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private lastRenewMs = 0;
  /** The Lease's holder and renewTime as last seen, and when this process saw them change. */
  private observed = { key: '', atMs: 0 };
  private tick: Promise<void> = Promise.resolve();
  /** Why the last round could neither take, renew nor read the Lease; null when it could. */
  private problem: string | null = null;
  private problemLoggedAtMs = 0;

  constructor(
    private readonly api: LeaseApi,
    private readonly settings: LeaseSettings,
    private readonly callbacks: LeaderCallbacks,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    private readonly clock: () => number = Date.now,
  ) {}

  isLeader(): boolean {
    return this.leading;
  }

  /** Null while this replica can lead or follow; else why not (the Lease could not be read or written). */
  leaseProblem(): string | null {
    return this.problem;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops campaigning; a leader stops its work (awaited) and releases the Lease. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.tick;
    if (!this.leading) return;
    this.leading = false;
    await this.callbacks.stopped();
    await this.release();
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.tick = this.round().finally(() => this.schedule(this.settings.retryPeriodS * 1000));
    }, ms);
  }

  private async round(): Promise<void> {
    let held = false;
    let failure: string | null = null;
    try {
      held = await this.tryAcquireOrRenew();
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
    if (!this.running) return;
    const now = this.clock();
    this.noteProblem(failure, now);
    if (held) {
      this.lastRenewMs = now;
      if (!this.leading) {
        this.leading = true;
        this.log.info({ identity: this.settings.identity, lease: `${this.settings.namespace}/${this.settings.name}` }, 'became leader');
        this.callbacks.started();
      }
    } else if (this.leading && now - this.lastRenewMs > this.settings.renewDeadlineS * 1000) {
      this.leading = false;
      this.log.warn({ identity: this.settings.identity }, 'lost the leader Lease: stopping work');
      await this.callbacks.stopped();
    }
  }

  /** Logs a Lease problem when it starts or changes (and again every PROBLEM_REPEAT_MS while it lasts), and its end; not every round. */
  private noteProblem(failure: string | null, now: number): void {
    const lease = `${this.settings.namespace}/${this.settings.name}`;
    if (failure === null) {
      if (this.problem !== null) this.log.info({ lease }, 'leader election: the Lease can be read and written again');
      this.problem = null;
      return;
    }
    if (failure !== this.problem || now - this.problemLoggedAtMs >= PROBLEM_REPEAT_MS) {
      this.log.warn({ lease, err: failure }, 'leader election: the Lease could not be read or written; this replica can neither lead nor follow and is not ready');
      this.problemLoggedAtMs = now;
    }
    this.problem = failure;
  }

  private expired(lease: V1Lease, now: number): boolean {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder === '') return true;
    const durationMs = (spec.leaseDurationSeconds ?? this.settings.durationS) * 1000;
    const renew = timeOf(spec.renewTime);
    const key = `${holder}@${String(renew)}`;
    if (key !== this.observed.key) this.observed = { key, atMs: now };
    return (Number.isFinite(renew) && renew + durationMs < now) || this.observed.atMs + durationMs < now;
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, durationS } = this.settings;
    const now = this.clock();
    const nowMicro = new V1MicroTime(now);
    const lease = await this.api.get(namespace, name);
    if (lease === null) {
      return this.api.create(namespace, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds: durationS, acquireTime: nowMicro, renewTime: nowMicro, leaseTransitions: 0 },
      });
    }
    const spec = lease.spec ?? {};
    const mine = spec.holderIdentity === identity;
    if (!mine && !this.expired(lease, now)) return false;
    return this.api.replace(namespace, name, {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationS,
        acquireTime: mine && spec.acquireTime !== undefined ? new V1MicroTime(timeOf(spec.acquireTime)) : nowMicro,
        renewTime: nowMicro,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    });
  }

  /** Empties the holder so that a candidate need not wait out the duration. */
  private async release(): Promise<void> {
    const { namespace, name, identity } = this.settings;
    try {
      const lease = await this.api.get(namespace, name);
      if (lease === null || lease.spec?.holderIdentity !== identity) return;
      const spec = lease.spec;
      const released = await this.api.replace(namespace, name, {
        ...lease,
        spec: {
          ...spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          renewTime: new V1MicroTime(this.clock()),
          ...(spec.acquireTime === undefined ? {} : { acquireTime: new V1MicroTime(timeOf(spec.acquireTime)) }),
        },
      });
      if (released) this.log.info({ identity }, 'released the leader Lease');
    } catch (err) {
      this.log.warn({ err }, 'could not release the leader Lease');
    }
  }
}
