/**
 * Instruction and log subscriptions (hivekit-compat.md 4.9, 5.3; `dat.typ` `ins` and `log`).
 *
 * Pushes leave as domain updates (push-port.ts); the v1 messages named here are built in
 * transport/actions/subscription-pushes.ts.
 *
 * - `ins`: every push is `{"typ":"sub","id","uty":"ful","ins":{<id>:{"id","lab","dat"}}}`, the
 *   realm's complete instruction map (`ful`, so that deletions show), after each create, update
 *   or delete of an instruction of the realm by any process (InstructionChangedEvent on the
 *   bus), and once on the next cycle after the reply with `exe:true` or after `sub upd`. The map
 *   is read from the store once per burst of changes, for every subscriber of the realm here.
 * - `log`: every push is `{"typ":"sub","id","uty":"ful","log":[{"id","lvl","tim","msg"},…]}`,
 *   the log events published on the bus (InstructionLogEvent) since the previous push, oldest
 *   first. `ful`, because the client keeps a `dta` push's array by index on top of the previous
 *   one; each push thus shows exactly the new events. At most `maxLogPerPush` per push (the
 *   newest). `exe:true` pushes the realm's recent events (LogHistory) once.
 *
 * Rights (`per`): a subscriber sees only the instructions, and the log events of the
 * instructions, whose id its token may read (readFilter); it hears of nothing else. A deleted
 * realm ends the subscriptions silently, also when it went during a bus outage (found at the
 * resync, as for the other kinds); after an outage (resync) the map is read again and
 * pushed where it differs from what the subscriber was last sent. Log events published during
 * an outage are lost (events, not state), as realm events are.
 */
import { isDeepStrictEqual } from 'node:util';
import type { IdFilter } from '../../auth/rights.js';
import type { InstructionLogEvent } from '../../domain/events.js';
import type { InstructionRecord } from '../../domain/instruction.js';
import type { BusSubscription } from '../../events/port.js';
import { LocusError, toLocusError } from '../../errors.js';
import type { InstructionStore } from '../../store/port.js';
import type { ConnectionLive, LiveSubscription } from './connection-live.js';
import type { SubscriptionUpdate } from './push-port.js';

export type LogEntry = InstructionLogEvent['entry'];

/**
 * The realm's recent log events (instructions/delivery/instruction-log.ts InstructionLog): a
 * bounded ring per realm, kept while someone listens to the realm (here: while it has `log`
 * subscribers), oldest first.
 */
export interface LogHistory {
  listen(realm: string): BusSubscription;
  recent(realm: string): LogEntry[];
}

export const noLogHistory: LogHistory = { listen: () => ({ unsubscribe: () => undefined }), recent: () => [] };

/** Most log events one push carries; a burst beyond keeps the newest. */
export const maxLogPerPush = 1000;

export interface InstructionFeedDeps {
  instructions: Pick<InstructionStore, 'list'>;
  logHistory?: LogHistory;
  onError: (err: unknown) => void;
}

export class InstructionsSubscription implements LiveSubscription {
  private full = false;
  /** The instructions the subscriber was last sent (for resync). */
  sent: InstructionRecord[] | null = null;
  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly realm: RealmInstructions,
    readonly readable: IdFilter | null,
  ) {}
  pushFull(): void {
    this.full = true;
    this.conn.schedule(this);
  }
  /** The instructions this subscriber may see now. */
  current(): InstructionRecord[] {
    const { readable } = this;
    const records = this.realm.records ?? [];
    return readable === null ? records : records.filter((record) => readable(record.id));
  }
  drain(out: SubscriptionUpdate[]): void {
    if (!this.full) return;
    this.full = false;
    const instructions = this.current();
    this.sent = instructions;
    out.push({ kind: 'instructions', subscription: this.id, instructions });
  }
  detach(): void {
    this.conn.unschedule(this);
    this.realm.instructionSubs.delete(this);
    this.realm.release();
  }
}

export class LogSubscription implements LiveSubscription {
  private pending: LogEntry[] = [];
  /** The `exe` push is due, even when it holds no event. */
  private initial = false;
  constructor(
    readonly id: string,
    readonly conn: ConnectionLive,
    readonly realm: RealmInstructions,
    readonly readable: IdFilter | null,
  ) {}
  add(entries: readonly LogEntry[]): void {
    const readable = this.readable;
    const visible = readable === null ? entries : entries.filter((entry) => readable(entry.id));
    if (visible.length === 0) return;
    this.pending.push(...visible);
    if (this.pending.length > maxLogPerPush) this.pending.splice(0, this.pending.length - maxLogPerPush);
    this.conn.schedule(this);
  }
  /** `exe:true`: the recent events go first in the next push, which is sent even when empty (compat 5.4). */
  pushInitial(recent: readonly LogEntry[]): void {
    const readable = this.readable;
    const visible = readable === null ? recent : recent.filter((entry) => readable(entry.id));
    this.pending = [...visible, ...this.pending].slice(-maxLogPerPush);
    this.initial = true;
    this.conn.schedule(this);
  }
  drain(out: SubscriptionUpdate[]): void {
    if (this.pending.length === 0 && !this.initial) return;
    out.push({ kind: 'log', subscription: this.id, entries: this.pending });
    this.pending = [];
    this.initial = false;
  }
  detach(): void {
    this.pending = [];
    this.conn.unschedule(this);
    this.realm.logSubs.delete(this);
    this.realm.release();
  }
}

/**
 * The instruction and log subscriptions of one realm here, and its map of instructions. The
 * realm's `ins` and `log` events come from its holder's bus subscription (live-subscriptions.ts
 * RealmLive), which also ends these subscriptions when the realm is deleted.
 */
export class RealmInstructions {
  readonly instructionSubs = new Set<InstructionsSubscription>();
  readonly logSubs = new Set<LogSubscription>();
  /** The realm's instructions while it has `ins` subscriptions (null: not read yet). */
  records: InstructionRecord[] | null = null;
  /** Keeps the realm's recent log events while it has `log` subscribers. */
  private logHold: BusSubscription | null = null;
  /** Ids changed since the last read began; a read runs again while there are some. */
  private changedIds = new Set<string>();
  private stale = false;
  private reading: Promise<void> | null = null;
  /** Why the last read failed. */
  private failure: unknown = null;

  constructor(
    readonly key: string,
    private readonly owner: InstructionFeeds,
    /** Called when the last instruction or log subscription went. */
    private readonly released: () => void,
  ) {}

  get size(): number {
    return this.instructionSubs.size + this.logSubs.size;
  }

  /** Reads the map once, unless it is held already; rejects when it could not be read. */
  async ready(): Promise<void> {
    if (this.records !== null && this.reading === null) return;
    this.stale = this.records === null || this.stale;
    this.reading ??= this.read();
    await this.reading;
    if (this.records === null) throw this.failure === null ? new LocusError('unavailable', 'the instructions could not be read') : toLocusError(this.failure);
  }

  /** Reads the map again and pushes it to the subscribers it differs for (after a bus outage). */
  async resync(): Promise<void> {
    if (this.instructionSubs.size === 0) return;
    this.stale = true;
    this.reading ??= this.read();
    await this.reading;
    for (const sub of this.instructionSubs) if (sub.sent !== null && !isDeepStrictEqual(sub.sent, sub.current())) sub.pushFull();
  }

  /** An `ins` event: instruction `id` was created, updated or deleted (the map is read at settle()). */
  changed(id: string): void {
    if (this.instructionSubs.size === 0) return;
    this.changedIds.add(id);
    this.stale = true;
  }

  /** The `log` events of one bus message. */
  logged(entries: readonly LogEntry[]): void {
    for (const sub of this.logSubs) sub.add(entries);
  }

  /** After a bus message: reads the map once for all the `ins` events it held. */
  settle(): void {
    if (this.stale) this.reading ??= this.read();
  }

  /** Reads until no change came in meanwhile, then pushes to the subscribers that may read a changed id. */
  private async read(): Promise<void> {
    try {
      while (this.stale) {
        this.stale = false;
        const changed = this.changedIds;
        this.changedIds = new Set();
        this.records = await this.owner.deps.instructions.list(this.key);
        if (changed.size === 0) continue;
        const ids = [...changed];
        for (const sub of this.instructionSubs) if (sub.readable === null || ids.some(sub.readable)) sub.pushFull();
      }
    } catch (err) {
      this.failure = err;
      this.owner.deps.onError(err);
    } finally {
      this.reading = null;
    }
  }

  /** A `log` subscriber came: the realm's recent events are kept from now on. */
  addLog(sub: LogSubscription): void {
    this.logSubs.add(sub);
    this.logHold ??= this.owner.history.listen(this.key);
  }

  /** Drops the realm when its last subscription went. */
  release(): void {
    if (this.instructionSubs.size === 0) this.records = null;
    if (this.logSubs.size === 0) {
      this.logHold?.unsubscribe();
      this.logHold = null;
    }
    if (this.size === 0) this.released();
  }
}

/** What instruction and log subscriptions of every realm here share: the store, the log history. */
export class InstructionFeeds {
  readonly history: LogHistory;

  constructor(readonly deps: InstructionFeedDeps) {
    this.history = deps.logHistory ?? noLogHistory;
  }

  /** The instruction and log subscriptions of a realm (`released`: when the last one went). */
  realm(key: string, released: () => void): RealmInstructions {
    return new RealmInstructions(key, this, released);
  }

  /** A new `ins` subscription, registered at once (a change while start() reads the map reaches it). */
  instructions(id: string, conn: ConnectionLive, realm: RealmInstructions, readable: IdFilter | null): InstructionsSubscription {
    const sub = new InstructionsSubscription(id, conn, realm, readable);
    realm.instructionSubs.add(sub);
    return sub;
  }

  /** A new `log` subscription, registered at once. */
  log(id: string, conn: ConnectionLive, realm: RealmInstructions, readable: IdFilter | null): LogSubscription {
    const sub = new LogSubscription(id, conn, realm, readable);
    realm.addLog(sub);
    return sub;
  }

  /**
   * Makes a new subscription live: an `ins` one once the realm's map is read (pushed on the
   * next cycle with `exe`); a `log` one at once (with `exe`, the recent events are pushed).
   */
  async start(sub: InstructionsSubscription | LogSubscription, exe: boolean): Promise<void> {
    if (sub instanceof InstructionsSubscription) {
      await sub.realm.ready();
      if (exe) sub.pushFull();
    } else if (exe) {
      sub.pushInitial(this.history.recent(sub.realm.key));
    }
  }
}
