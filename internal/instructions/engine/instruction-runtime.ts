/**
 * The instruction engine of one API process: a lease keeper (lease-keeper.ts) that decides
 * which realms this process evaluates, and a RealmEngine (realm-engine.ts) for each of them,
 * with the writes of actions going through the object and area services (marked with their
 * origin), sendToUrl through the delivery queue, and log events to the realm's instruction log.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Realm } from '../../domain/types.js';
import type { BusSubscription, EventBus } from '../../events/port.js';
import type { AreaService } from '../../service/areas.js';
import type { ChangeFeed } from '../../service/change-feed.js';
import { isoTime, type Clock } from '../../service/clock.js';
import type { ObjectService } from '../../service/objects.js';
import type { InstructionStore, LeaseStore, Store } from '../../store/port.js';
import type { Program } from '../language/ast.js';
import type { DeliveryQueue } from '../delivery/delivery-queue.js';
import { sendToUrlBody } from '../delivery/hivekit-body.js';
import type { InstructionLog } from '../delivery/instruction-log.js';
import type { ActionWrites, UrlSender } from './action-runner.js';
import { LeaseKeeper, type HeldRealm } from './lease-keeper.js';
import type { InstructionObserver } from './engine-observer.js';
import { RealmEngine, type EngineSettings } from './realm-engine.js';

export interface RuntimeSettings extends EngineSettings {
  /** LOCUS_INSTRUCTION_LEASE_TTL_MS */
  leaseTtlMs: number;
  /** LOCUS_INSTRUCTION_LEASE_RENEW_MS */
  leaseRenewMs: number;
}

export interface InstructionRuntimeDeps {
  /** This process's name in leases (LOCUS_PROCESS_ID, else defaultProcessId()). */
  processId: string;
  store: Pick<Store, 'objects' | 'areas'> & { readonly instructions: InstructionStore; readonly leases: LeaseStore };
  feed: ChangeFeed;
  bus: Pick<EventBus, 'subscribe' | 'publish'>;
  /** The realm of a storage key (RealmService.find). */
  findRealm(key: string): Promise<Realm | null>;
  compile(source: string): Program;
  objects: Pick<ObjectService, 'upsert' | 'delete'>;
  areas: Pick<AreaService, 'update' | 'delete'>;
  /** The sendToUrl queue. */
  delivery: Pick<DeliveryQueue, 'enqueue' | 'stopRealm'>;
  /** The realms' instruction logs (pushed to `log` subscribers). */
  log: Pick<InstructionLog, 'append' | 'listen'>;
  observer: InstructionObserver;
  settings: RuntimeSettings;
  clock: Clock;
  logger: Logger;
}

/** A process name that tells people which process it is: host, pid and a random part. */
export function defaultProcessId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Writes of actions through the services, so they are ordinary writes (events, history, subscriptions). */
function serviceWrites(objects: InstructionRuntimeDeps['objects'], areas: InstructionRuntimeDeps['areas']): ActionWrites {
  return {
    setObjectData: async (realm, id, name, value, origin) => {
      await objects.upsert(realm, id, { data: { [name]: value } }, { mustExist: true, origin });
    },
    deleteObject: async (realm, id, origin) => {
      await objects.delete(realm, id, undefined, origin);
    },
    setAreaData: async (realm, id, name, value, origin) => {
      await areas.update(realm, id, { data: { [name]: value } }, origin);
    },
    deleteArea: async (realm, id, origin) => {
      await areas.delete(realm, id, origin);
    },
  };
}

/**
 * The delivery queue as the action runner sees it: resolves true once delivered, false once it
 * failed, was refused or dropped. A delivery cut short (the realm stopped here, the process
 * closing) never resolves: its action stays in the outbox for the next holder.
 */
function queueSender(delivery: InstructionRuntimeDeps['delivery']): UrlSender {
  return (request) =>
    new Promise((resolve) => {
      const accepted = delivery.enqueue(
        { realm: request.realm, instruction: request.instruction, key: request.key, url: request.url, body: sendToUrlBody(request.entries) },
        (result) => resolve(result.outcome === 'success'),
      );
      if (!accepted) resolve(false);
    });
}

/** A realm held here: its engine once the realm is found, none when the realm is gone. */
class HeldEngine implements HeldRealm {
  engine: RealmEngine | null = null;
  private stopped = false;
  readonly ready: Promise<void>;
  /** The holder keeps the realm's log history, so a `log` subscriber with `exe` gets it here too. */
  private readonly logHistory: BusSubscription;

  constructor(
    private readonly key: string,
    private readonly runtime: InstructionRuntime,
  ) {
    this.logHistory = runtime.deps.log.listen(key);
    this.ready = runtime.deps.findRealm(key).then(
      (realm) => {
        if (realm === null || this.stopped) return;
        this.engine = runtime.engineFor(realm);
        this.engine.start();
      },
      (err: unknown) => runtime.failed(key, err),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.ready;
    await this.engine?.stop();
    this.logHistory.unsubscribe();
    // Its deliveries under way are the next holder's now (they stay in the outbox).
    this.runtime.deps.delivery.stopRealm(this.key);
  }
}

export class InstructionRuntime {
  private readonly keeper: LeaseKeeper;
  private readonly writes: ActionWrites;
  private readonly send: UrlSender;

  constructor(readonly deps: InstructionRuntimeDeps) {
    this.writes = serviceWrites(deps.objects, deps.areas);
    this.send = queueSender(deps.delivery);
    this.keeper = new LeaseKeeper({
      processId: deps.processId,
      instructions: deps.store.instructions,
      leases: deps.store.leases,
      clock: deps.clock,
      ttlMs: deps.settings.leaseTtlMs,
      renewMs: deps.settings.leaseRenewMs,
      startRealm: (realm) => new HeldEngine(realm, this),
      onHeld: (realm, held) => {
        deps.observer.leaseHeld(realm, held);
        deps.logger.info({ realm, process: deps.processId }, held ? 'evaluating the realm\'s instructions (lease taken)' : 'no longer evaluating the realm\'s instructions');
      },
      onError: (err, realm) => deps.logger.error({ err, realm }, 'instruction lease round failed'),
    });
  }

  get processId(): string {
    return this.deps.processId;
  }

  start(): void {
    this.keeper.start();
  }

  /**
   * An instruction of the realm was created, changed or deleted in this process: the realm's
   * engine (if here) reads it again now, and a realm with a first instruction is looked at at once.
   */
  instructionChanged(realm: string, id: string): void {
    const engine = this.engineOf(realm);
    if (engine !== null) engine.instructionChanged(id);
    else this.keeper.hear(realm);
  }

  /** The realms whose instructions this process evaluates now. */
  heldRealms(): string[] {
    return this.keeper.realms();
  }

  /** The engine of a realm held here (null: not held, or still being found). */
  engineOf(realm: string): RealmEngine | null {
    const held = this.keeper.engineOf(realm);
    return held instanceof HeldEngine ? held.engine : null;
  }

  /**
   * Messages may have been lost (a bus outage): every engine here starts again, reading its
   * realm from the store and firing the differences.
   */
  resync(): void {
    for (const realm of this.keeper.realms()) this.keeper.restart(realm);
  }

  /** A lease round now (tests, and the cluster test's takeover checks). */
  leaseRound(): Promise<void> {
    return this.keeper.runRound();
  }

  /** Stops every engine and gives the leases back. */
  close(): Promise<void> {
    return this.keeper.close();
  }

  /** The engine of a realm: built by the realm's HeldEngine. */
  engineFor(realm: Realm): RealmEngine {
    const { deps } = this;
    return new RealmEngine({
      realm,
      store: deps.store,
      feed: deps.feed,
      bus: deps.bus,
      compile: (source) => deps.compile(source),
      writes: this.writes,
      send: this.send,
      log: (realm, entry) => deps.log.append(realm, entry),
      suspend: (r, id, reason) => this.suspend(r, id, reason),
      observer: deps.observer,
      settings: deps.settings,
      clock: deps.clock,
      onActionDone: (action, failure) =>
        deps.logger.debug(
          { realm: realm.id, process: deps.processId, instruction: action.instruction, part: action.part, key: action.key, entries: action.entries.length, depth: action.depth, failure },
          'instruction action carried out',
        ),
      onFailed: (err) => this.failed(realm.id, err),
    });
  }

  /** A realm's engine failed: logged, and started again while this process holds the lease. */
  failed(realm: string, err: unknown): void {
    this.deps.logger.error({ err, realm }, 'the realm\'s instruction engine failed; it starts again');
    this.keeper.restart(realm);
  }

  private async suspend(realm: Realm, id: string, reason: string): Promise<void> {
    const updated = await this.deps.store.instructions.update(realm.id, id, { suspended: reason }, isoTime(this.deps.clock()));
    if (updated !== null) this.deps.bus.publish(realm.id, [{ kind: 'ins', realm: realm.id, id, act: 'upd' }]);
  }
}
