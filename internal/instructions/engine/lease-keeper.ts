/**
 * Which realms' instructions this process evaluates: the ones whose store lease
 * `instructions:<realm>` it holds. Every process runs a keeper; each round (every renew
 * period) it lists the realms that have instructions, plus realms it was just told about,
 * and asks the store for each lease (acquire takes a free or expired lease and renews one
 * already held). It runs an engine for each realm it holds and stops it when the lease goes
 * to another process, when the realm has no instructions any more, or when the store has not
 * confirmed the lease for longer than its time (a holder cut off from the store stops before
 * another process may take over). close() stops the engines and gives the leases back, so a
 * clean shutdown hands realms over at once rather than after the lease time.
 */
import type { Lease } from '../../domain/instruction.js';
import { isoTime, type Clock } from '../../service/clock.js';
import type { InstructionStore, LeaseStore } from '../../store/port.js';

/** What the keeper runs for a realm it holds (a RealmEngine). */
export interface HeldRealm {
  /** Stops evaluating; resolves once no more store writes will be made for the realm. */
  stop(): Promise<void>;
}

export interface LeaseKeeperOptions {
  processId: string;
  instructions: Pick<InstructionStore, 'realmsWithInstructions'>;
  leases: LeaseStore;
  clock: Clock;
  ttlMs: number;
  renewMs: number;
  /** Starts evaluating a realm this process now holds. */
  startRealm(realm: string): HeldRealm;
  /** A realm became held (true) or stopped being held (false) here: the lease gauge. */
  onHeld?(realm: string, held: boolean): void;
  onError(err: unknown, realm: string | null): void;
}

/** The lease name of a realm's instructions. */
export const leaseName = (realm: string): string => `instructions:${realm}`;

interface Held {
  engine: HeldRealm;
  /** Until when the store last confirmed the lease (by this process's clock). */
  confirmedUntil: number;
}

export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  /** Realms heard of since the last round (an instruction created here, or an event). */
  private readonly heard = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly options: LeaseKeeperOptions) {}

  /** Runs a round now, then one every renew period. */
  start(): void {
    if (this.timer !== null || this.closed) return;
    this.timer = setInterval(() => void this.runRound(), this.options.renewMs);
    this.timer.unref();
    void this.runRound();
  }

  /** The realms this process evaluates now. */
  realms(): string[] {
    return [...this.held.keys()];
  }

  /** The engine of a held realm, if any. */
  engineOf(realm: string): HeldRealm | null {
    return this.held.get(realm)?.engine ?? null;
  }

  /** A realm may have gained its first instruction: looked at in a round that starts now. */
  hear(realm: string): void {
    // Before start() there is nothing to hurry: the first round looks at every realm.
    if (this.closed || this.timer === null) return;
    this.heard.add(realm);
    void this.runRound();
  }

  /**
   * Starts a realm's engine again (it failed): stopped now, started by the next round (a renew
   * period later, so a lasting failure is retried at that pace) if the lease is still this
   * process's.
   */
  restart(realm: string): void {
    void this.letGo(realm, false);
  }

  /** One round; a round asked for while one runs follows it (rounds never overlap). */
  runRound(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.round !== null) {
      this.again = true;
      return this.round;
    }
    this.round = this.roundOnce()
      .catch((err: unknown) => this.options.onError(err, null))
      .finally(() => {
        this.round = null;
        if (this.again && !this.closed) {
          this.again = false;
          void this.runRound();
        }
      });
    return this.round;
  }

  private async roundOnce(): Promise<void> {
    const { instructions, leases, processId, ttlMs, clock } = this.options;
    const heard = [...this.heard];
    this.heard.clear();
    let listed: string[];
    try {
      listed = await instructions.realmsWithInstructions();
    } catch (err) {
      this.options.onError(err, null);
      // The store does not answer: held realms stay only while their leases surely last.
      await this.dropUnconfirmed();
      return;
    }
    const wanted = new Set([...listed, ...heard]);
    // Realms without instructions (deleted ones too) are let go.
    for (const realm of [...this.held.keys()]) {
      if (!wanted.has(realm)) await this.letGo(realm, true);
    }
    for (const realm of wanted) {
      if (this.closed) return;
      const asked = clock();
      let lease: Lease;
      try {
        lease = await leases.acquire(leaseName(realm), processId, ttlMs, isoTime(asked));
      } catch (err) {
        this.options.onError(err, realm);
        continue;
      }
      if (lease.holder === processId) this.keep(realm, asked + ttlMs);
      else if (this.held.has(realm)) await this.letGo(realm, false);
    }
    await this.dropUnconfirmed();
  }

  private keep(realm: string, confirmedUntil: number): void {
    if (this.closed) return;
    const held = this.held.get(realm);
    if (held !== undefined) {
      held.confirmedUntil = confirmedUntil;
      return;
    }
    const engine = this.options.startRealm(realm);
    this.held.set(realm, { engine, confirmedUntil });
    this.options.onHeld?.(realm, true);
  }

  /**
   * Stops the engines whose leases the store has not confirmed for long enough that another
   * process may take them over within the next round.
   */
  private async dropUnconfirmed(): Promise<void> {
    const horizon = this.options.clock() + this.options.renewMs;
    for (const [realm, held] of [...this.held]) {
      if (held.confirmedUntil <= horizon) await this.letGo(realm, false);
    }
  }

  /** Stops a realm's engine; `release` gives the lease back too. */
  private async letGo(realm: string, release: boolean): Promise<void> {
    const held = this.held.get(realm);
    if (held === undefined) return;
    this.held.delete(realm);
    this.options.onHeld?.(realm, false);
    await held.engine.stop().catch((err: unknown) => this.options.onError(err, realm));
    if (release) await this.options.leases.release(leaseName(realm), this.options.processId).catch((err: unknown) => this.options.onError(err, realm));
  }

  /** Stops every engine and releases every lease; no round runs afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.round;
    await Promise.all([...this.held.keys()].map((realm) => this.letGo(realm, true)));
  }
}
