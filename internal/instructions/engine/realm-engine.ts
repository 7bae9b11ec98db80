/**
 * The instructions of one realm, run by the process that holds the realm's lease
 * (lease-keeper.ts). It owns the state, time and I/O around the pure evaluators:
 *
 * - Start: subscribe to the change feed first (changes are held back while loading), load
 *   the mirror page by page, load every instruction with its persisted membership, carry out
 *   the pending actions a previous holder left (at least once), apply what the feed brought
 *   meanwhile, then rescan every instruction and fire for the differences (repair).
 * - Each batch of changes: apply each change to the mirror, evaluate the instructions it
 *   can affect, net what joined and left over the batch, persist the membership changes and
 *   the actions they cause in one store call (the outbox), then carry the actions out and
 *   remove them. An entry that joins and leaves within one batch fires nothing.
 * - A change made at depth >= the depth limit updates the sets (so they stay true to the
 *   data, and repair finds nothing to do) but fires no action; it is logged once per chain.
 * - Periodically, on the ticks of an instruction's `every` clock, and when an instruction is
 *   created or gets a new source, a rescan.
 * - An instruction whose actions or evaluation keep failing, or whose set grows past the
 *   limit, is suspended: its record says why, and it runs no more until changed.
 *
 * All work runs one task at a time (a promise chain), so membership writes happen in the
 * order of the changes; actions start in that order and run on (object writes keep their
 * order per object in the object service), while the next batch is evaluated.
 */
import { randomBytes } from 'node:crypto';
import type { InstructionRecord, MembershipChange, PendingAction } from '../../domain/instruction.js';
import type { ChangeOrigin, Realm } from '../../domain/types.js';
import { toLocusError } from '../../errors.js';
import type { EventBus, BusSubscription } from '../../events/port.js';
import type { ChangeFeed, ChangeFeedSubscription, RealmChange } from '../../service/change-feed.js';
import { isoTime, type Clock } from '../../service/clock.js';
import type { InstructionStore, Store } from '../../store/port.js';
import type { Program } from '../language/ast.js';
import { applyArea, applyObject } from './change-evaluation.js';
import { ActionRunner, type ActionWrites, type UrlSender } from './action-runner.js';
import { EveryClock } from './every-clock.js';
import { InstructionEvaluator, type MembershipDelta } from './instruction-evaluator.js';
import { InstructionIndex } from './instruction-index.js';
import { RealmMirror } from './realm-mirror.js';
import type { EvaluationTrigger, InstructionLogEntry, InstructionObserver } from './engine-observer.js';

export interface EngineSettings {
  /** LOCUS_INSTRUCTION_MAX_DEPTH */
  maxDepth: number;
  /** LOCUS_INSTRUCTION_REPAIR_MS */
  repairMs: number;
  /** LOCUS_INSTRUCTION_BATCH_MS */
  batchMs: number;
  /** LOCUS_INSTRUCTION_MAX_FAILURES */
  maxFailures: number;
  /** LOCUS_INSTRUCTION_MAX_ENTRIES */
  maxEntries: number;
  /** Objects and areas read per store call while loading. */
  pageSize: number;
}

export interface RealmEngineDeps {
  realm: Realm;
  store: Pick<Store, 'objects' | 'areas'> & { readonly instructions: InstructionStore };
  feed: ChangeFeed;
  /** Where `ins` events arrive (any process's InstructionService publishes them). */
  bus: Pick<EventBus, 'subscribe'>;
  compile(source: string): Program;
  writes: ActionWrites;
  send: UrlSender;
  log(realm: string, entry: InstructionLogEntry): void;
  /** Marks an instruction suspended in the store (and tells `ins` subscribers). */
  suspend(realm: Realm, id: string, reason: string): Promise<void>;
  observer: InstructionObserver;
  settings: EngineSettings;
  clock: Clock;
  /** Each pending action once carried out (`failure` null: every call succeeded), for the process log. */
  onActionDone?(action: PendingAction, failure: string | null): void;
  /** The engine hit an error it cannot go on from (the store refused a membership write): the runtime starts it again. */
  onFailed(err: unknown): void;
}

/** One running instruction. */
interface Running {
  record: InstructionRecord;
  program: Program;
  evaluator: InstructionEvaluator;
  /** Consecutive failures of its actions and evaluations. */
  failures: number;
  clock: EveryClock | null;
}

/** An entry's net change over a batch. */
interface EntryChange {
  joined: boolean;
  /** The deepest change that moved it (its actions' writes are one deeper). */
  depth: number;
  /** Moved by a change at the depth limit: recorded, fires nothing. */
  silent: boolean;
}

/** What one batch (or rescan) did to the sets, per instruction, netted. */
class BatchDeltas {
  readonly byInstruction = new Map<Running, Map<string, EntryChange>>();

  add(run: Running, delta: MembershipDelta, depth: number, silent: boolean): void {
    if (delta.joined.length === 0 && delta.left.length === 0) return;
    let entries = this.byInstruction.get(run);
    if (entries === undefined) {
      entries = new Map();
      this.byInstruction.set(run, entries);
    }
    for (const key of delta.joined) note(entries, key, true, depth, silent);
    for (const key of delta.left) note(entries, key, false, depth, silent);
  }
}

/** An entry that joins after leaving (or leaves after joining) in one batch is where it was. */
function note(entries: Map<string, EntryChange>, key: string, joined: boolean, depth: number, silent: boolean): void {
  const before = entries.get(key);
  if (before !== undefined && before.joined !== joined) entries.delete(key);
  else entries.set(key, { joined, depth, silent });
}

export class RealmEngine {
  private readonly mirror = new RealmMirror();
  private readonly index = new InstructionIndex();
  private readonly running = new Map<string, Running>();
  private readonly suspendedIds = new Set<string>();
  private readonly runner: ActionRunner;
  /** Changes heard and not evaluated yet. */
  private incoming: RealmChange[] = [];
  private drainQueued = false;
  private loaded = false;
  private stopped = false;
  private work: Promise<void> = Promise.resolve();
  private feedSubscription: ChangeFeedSubscription | null = null;
  private busSubscription: BusSubscription | null = null;
  private repairTimer: NodeJS.Timeout | null = null;
  /** Actions under way. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Instructions whose chains hit the depth limit since the last repair (logged once). */
  private readonly warnedChains = new Set<string>();
  /** Makes action keys unique across engines and processes. */
  private readonly tag = randomBytes(6).toString('base64url');
  private sequence = 0;

  constructor(private readonly deps: RealmEngineDeps) {
    this.runner = new ActionRunner({
      writes: deps.writes,
      send: deps.send,
      source: this.mirror,
      onAction: (kind, ok) => deps.observer.action(kind, ok),
    });
  }

  private get realmKey(): string {
    return this.deps.realm.id;
  }

  /** Loads and repairs (in the background); the engine evaluates changes from then on. */
  start(): void {
    this.feedSubscription = this.deps.feed.subscribe(this.realmKey, (changes) => this.hear(changes));
    this.busSubscription = this.deps.bus.subscribe(this.realmKey, (message) => {
      // A deleted realm: no action may write into it again (the keeper lets it go next round).
      if (message.kind === 'realm_deleted') return void this.stop();
      for (const event of message.events) if (event.kind === 'ins') this.instructionChanged(event.id);
    });
    this.enqueue(() => this.load());
  }

  /** Stops evaluating; resolves when the task under way has finished. Actions under way finish on their own. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.feedSubscription?.unsubscribe();
    this.busSubscription?.unsubscribe();
    if (this.repairTimer !== null) clearInterval(this.repairTimer);
    for (const run of this.running.values()) run.clock?.stop();
    this.deps.observer.suspended(this.realmKey, 0);
    await this.work;
  }

  /** Resolves once the work queued so far and the actions under way are done (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const work = this.work;
      await work;
      await Promise.all([...this.inFlight]);
      if (work === this.work && this.inFlight.size === 0 && (this.incoming.length === 0 || !this.loaded)) return;
    }
  }

  /** An instruction was created, changed or deleted: read again from the store. */
  instructionChanged(id: string): void {
    this.enqueue(() => this.reload(id));
  }

  /** Rescans every instruction now and fires the differences (as the periodic repair does). */
  repair(): Promise<void> {
    this.enqueue(() => this.rescan([...this.running.values()], 'repair'));
    return this.work;
  }

  /** The entry keys of an instruction's set as held in memory (null: not running). */
  entriesOf(id: string): ReadonlySet<string> | null {
    return this.running.get(id)?.evaluator.entries ?? null;
  }

  private enqueue(task: () => Promise<void>): void {
    this.work = this.work.then(async () => {
      if (!this.stopped) await task();
    });
    this.work = this.work.catch((err: unknown) => {
      if (this.stopped) return;
      void this.stop();
      this.deps.onFailed(err);
    });
  }

  private hear(changes: readonly RealmChange[]): void {
    if (this.stopped) return;
    for (let i = 0; i < changes.length; i++) this.incoming.push(changes[i] as RealmChange);
    if (this.loaded) this.scheduleDrain();
  }

  private scheduleDrain(): void {
    if (this.drainQueued) return;
    this.drainQueued = true;
    this.enqueue(async () => {
      this.drainQueued = false;
      const batch = this.incoming;
      this.incoming = [];
      if (batch.length > 0) await this.evaluateBatch(batch);
    });
  }

  // ---- start -----------------------------------------------------------------------------

  private async load(): Promise<void> {
    const { store, settings } = this.deps;
    const realm = this.realmKey;
    let cursor: string | undefined;
    do {
      const page = await store.objects.list(realm, cursor === undefined ? { limit: settings.pageSize } : { limit: settings.pageSize, cursor });
      for (const obj of page.items) this.mirror.applyObject(null, obj);
      cursor = page.next ?? undefined;
    } while (cursor !== undefined && !this.stopped);
    cursor = undefined;
    do {
      const page = await store.areas.list(realm, cursor === undefined ? { limit: settings.pageSize } : { limit: settings.pageSize, cursor });
      for (const area of page.items) this.mirror.applyArea(null, area);
      cursor = page.next ?? undefined;
    } while (cursor !== undefined && !this.stopped);
    for (const record of await store.instructions.list(realm)) await this.install(record);
    this.reportSuspended();
    await this.carryOutLeftovers();
    this.loaded = true;
    const batch = this.incoming;
    this.incoming = [];
    if (batch.length > 0) await this.evaluateBatch(batch);
    await this.rescan([...this.running.values()], 'repair');
    if (this.stopped) return;
    for (const run of this.running.values()) run.clock?.start();
    this.repairTimer = setInterval(() => void this.repair(), settings.repairMs);
    this.repairTimer.unref();
  }

  /** Runs an instruction from its stored record and membership (the first evaluation rescans). */
  private async install(record: InstructionRecord): Promise<Running | null> {
    if (record.suspended !== null) {
      this.suspendedIds.add(record.id);
      return null;
    }
    let program: Program;
    try {
      program = this.deps.compile(record.source);
    } catch (err) {
      this.log(record.id, 'error', `the stored source does not compile, so the instruction does not run: ${toLocusError(err).message}`);
      return null;
    }
    const evaluator = new InstructionEvaluator(record.id, program);
    evaluator.load(await this.deps.store.instructions.members(this.realmKey, record.id));
    const run: Running = { record, program, evaluator, failures: 0, clock: null };
    if (program.every !== null) {
      run.clock = new EveryClock(this.deps.clock, program.every.ms, () => this.enqueue(() => this.rescan([run], 'tick')));
    }
    this.running.set(record.id, run);
    this.index.add(evaluator);
    return run;
  }

  private uninstall(id: string): void {
    const run = this.running.get(id);
    if (run === undefined) return;
    run.clock?.stop();
    this.running.delete(id);
    this.index.remove(run.evaluator);
  }

  /**
   * Starts the actions a previous holder (or this process, before a restart) decided and did
   * not finish, oldest first, without waiting for them (a slow delivery must not hold the
   * realm's evaluation up); only a full page of actions all under way is waited for, to see
   * past it.
   */
  private async carryOutLeftovers(): Promise<void> {
    const pageSize = 1000;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.deps.store.instructions.pending(this.realmKey, pageSize);
      const fresh = page.filter((action) => !seen.has(action.key));
      for (const action of fresh) {
        seen.add(action.key);
        this.carryOut(action);
      }
      if (page.length < pageSize || this.stopped) return;
      if (fresh.length === 0) {
        // Nothing under way either: those rows could not be removed; the next start tries again.
        if (this.inFlight.size === 0) return;
        await Promise.all([...this.inFlight]);
      }
    }
  }

  // ---- instruction changes ------------------------------------------------------------------

  private async reload(id: string): Promise<void> {
    const record = await this.deps.store.instructions.get(this.realmKey, id);
    const current = this.running.get(id);
    if (current !== undefined && record !== null && record.suspended === null && record.generation === current.record.generation) {
      // Label or data changed: the program and the set stay.
      current.record = record;
      return;
    }
    this.uninstall(id);
    this.suspendedIds.delete(id);
    if (record !== null) {
      const run = await this.install(record);
      if (run !== null) {
        // A new source starts from an empty set (the store dropped the old one): every match joins.
        await this.rescan([run], 'create');
        run.clock?.start();
      }
    }
    this.reportSuspended();
  }

  // ---- evaluation ---------------------------------------------------------------------------

  private async evaluateBatch(batch: readonly RealmChange[]): Promise<void> {
    const { maxDepth, batchMs } = this.deps.settings;
    const started = performance.now();
    const deltas = new BatchDeltas();
    const spent = new Map<Running, number>();
    let evaluations = 0;
    for (const item of batch) {
      const origin = item.change.origin;
      const depth = origin?.depth ?? 0;
      const silent = depth >= maxDepth;
      if (silent) this.depthReached(origin as ChangeOrigin);
      const applied =
        item.kind === 'object'
          ? applyObject(this.mirror, this.index, item.change.id, item.change.new)
          : applyArea(this.mirror, this.index, item.change.id, item.change.new);
      for (const evaluator of applied.evaluators) {
        const run = this.running.get(evaluator.id);
        if (run === undefined) continue;
        const started = performance.now();
        evaluations++;
        try {
          const delta = applied.evaluate(run.evaluator);
          deltas.add(run, delta, depth, silent);
        } catch (err) {
          this.failed(run, `evaluation failed: ${toLocusError(err).message}`);
          // Its set may be half updated: the next change makes it rescan.
          run.evaluator.load([...run.evaluator.entries]);
        }
        spent.set(run, (spent.get(run) ?? 0) + performance.now() - started);
      }
    }
    const ms = performance.now() - started;
    this.deps.observer.evaluated(this.realmKey, 'change', evaluations, ms / 1000);
    if (ms > batchMs) this.tooSlow(spent, ms);
    await this.commit(deltas);
  }


  /** Evaluates instructions over the whole realm and fires the differences. */
  private async rescan(runs: readonly Running[], trigger: EvaluationTrigger): Promise<void> {
    if (runs.length === 0) return;
    const started = performance.now();
    const deltas = new BatchDeltas();
    for (const run of runs) {
      if (!this.running.has(run.record.id)) continue;
      try {
        deltas.add(run, run.evaluator.rescan(this.mirror), 0, false);
      } catch (err) {
        this.failed(run, `evaluation failed: ${toLocusError(err).message}`);
      }
    }
    this.deps.observer.evaluated(this.realmKey, trigger, runs.length, (performance.now() - started) / 1000);
    if (trigger === 'repair') this.warnedChains.clear();
    await this.commit(deltas);
  }

  /** Persists the batch's membership changes with the actions they cause, then carries the actions out. */
  private async commit(deltas: BatchDeltas): Promise<void> {
    const changes: MembershipChange[] = [];
    const actions: PendingAction[] = [];
    let joinedCount = 0;
    let leftCount = 0;
    const now = isoTime(this.deps.clock());
    for (const [run, entries] of deltas.byInstruction) {
      if (entries.size === 0) continue;
      const joined: string[] = [];
      const left: string[] = [];
      const fire = { then: [] as string[], until: [] as string[] };
      const depth = { then: 0, until: 0 };
      for (const [key, change] of entries) {
        const part = change.joined ? 'then' : 'until';
        (change.joined ? joined : left).push(key);
        if (change.silent) continue;
        fire[part].push(key);
        depth[part] = Math.max(depth[part], change.depth);
      }
      joinedCount += joined.length;
      leftCount += left.length;
      const { id, generation } = run.record;
      changes.push({ instruction: id, generation, joined, left });
      for (const part of ['then', 'until'] as const) {
        if (fire[part].length === 0 || run.program[part].length === 0) continue;
        const key = `${id}:${generation}:${part}:${this.tag}.${++this.sequence}`;
        actions.push({ key, instruction: id, generation, part, entries: fire[part], created: now, attempts: 0, depth: depth[part] + 1 });
      }
    }
    if (changes.length === 0) return;
    await this.deps.store.instructions.applyMembership(this.realmKey, changes, actions);
    this.deps.observer.entries(this.realmKey, joinedCount, leftCount);
    for (const action of actions) this.carryOut(action);
    for (const run of deltas.byInstruction.keys()) {
      const size = run.evaluator.entries.size;
      if (size > this.deps.settings.maxEntries && this.running.get(run.record.id) === run) {
        await this.suspend(run, `its when set holds ${size} entries, more than the limit of ${this.deps.settings.maxEntries} (LOCUS_INSTRUCTION_MAX_ENTRIES)`);
      }
    }
  }

  // ---- actions ------------------------------------------------------------------------------

  /** Starts carrying out an action; it is removed from the store once done, whatever came of it. */
  private carryOut(action: PendingAction): void {
    const done = this.runAction(action).catch((err: unknown) => this.log(action.instruction, 'error', `an action could not be carried out: ${toLocusError(err).message}`));
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  private async runAction(action: PendingAction): Promise<void> {
    const run = this.running.get(action.instruction);
    const store = this.deps.store.instructions;
    // The instruction was deleted, suspended or given a new source since: the action is void.
    if (run === undefined || run.record.generation !== action.generation) {
      await store.completePending(this.realmKey, [action.key]);
      return;
    }
    const chains = action.part === 'then' ? run.program.then : run.program.until;
    const outcome = await this.runner.run(this.deps.realm, action, chains);
    await store.completePending(this.realmKey, [action.key]);
    this.deps.onActionDone?.(action, outcome.failure);
    if (outcome.failure === null) run.failures = 0;
    else this.failed(run, outcome.failure);
  }

  // ---- failures, limits, suspension -------------------------------------------------------

  /** Logs a failure of an instruction; the Nth in a row suspends it. */
  private failed(run: Running, reason: string): void {
    run.failures++;
    this.log(run.record.id, 'error', reason);
    if (run.failures >= this.deps.settings.maxFailures) {
      const failures = run.failures;
      this.enqueue(() => this.suspend(run, `${failures} failures in a row (LOCUS_INSTRUCTION_MAX_FAILURES); the last: ${reason}`));
    }
  }

  private async suspend(run: Running, reason: string): Promise<void> {
    if (this.running.get(run.record.id) !== run) return;
    this.uninstall(run.record.id);
    this.suspendedIds.add(run.record.id);
    this.reportSuspended();
    this.log(run.record.id, 'error', `suspended: ${reason}`);
    await this.deps.suspend(this.deps.realm, run.record.id, reason);
  }

  /** A batch over the time limit: logged, and a failure of the instruction that took the most of it. */
  private tooSlow(spent: ReadonlyMap<Running, number>, ms: number): void {
    let slowest: Running | null = null;
    let most = -1;
    for (const [run, took] of spent) {
      if (took > most) {
        slowest = run;
        most = took;
      }
    }
    if (slowest === null) return;
    this.failed(
      slowest,
      `evaluating a batch of changes took ${Math.round(ms)} ms, over the limit of ${this.deps.settings.batchMs} ms (LOCUS_INSTRUCTION_BATCH_MS); this instruction took ${Math.round(most)} ms of it`,
    );
  }

  private depthReached(origin: ChangeOrigin): void {
    this.deps.observer.depthLimited();
    if (this.warnedChains.has(origin.instruction)) return;
    this.warnedChains.add(origin.instruction);
    this.log(
      origin.instruction,
      'warn',
      `a chain of instructions reached the depth limit (${this.deps.settings.maxDepth}, LOCUS_INSTRUCTION_MAX_DEPTH): the writes this instruction made at that depth trigger no instruction`,
    );
  }

  private reportSuspended(): void {
    if (!this.stopped) this.deps.observer.suspended(this.realmKey, this.suspendedIds.size);
  }

  private log(id: string, lvl: InstructionLogEntry['lvl'], msg: string): void {
    this.deps.log(this.realmKey, { id, lvl, msg });
  }
}

