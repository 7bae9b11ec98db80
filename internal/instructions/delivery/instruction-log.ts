/**
 * The instruction log of a realm (hivescript.md 7): runtime errors, failed and dropped
 * deliveries, as events `{id, lvl, tim, msg}`. The process that evaluates a realm's instructions
 * appends them; they travel on the bus (kind `log`), and every process listening to the realm
 * keeps the latest ones in a bounded ring, so that a `log` subscriber on any process can be
 * shown them.
 *
 * The ring is filled only from the bus, the appending process's own events included (the bus
 * delivers a process's events to its own subscribers), so nothing is kept twice. A realm is
 * listened to while someone holds a `listen` handle for it (the evaluating process while it holds
 * the realm; a process while it has `log` subscribers); after the last is released its ring is
 * let go, since it would miss what follows.
 */
import type { InstructionLogEvent } from '../../domain/events.js';
import type { BusSubscription, EventBus, RealmMessage } from '../../events/port.js';

export type InstructionLogEntry = InstructionLogEvent['entry'];
export type LogLevel = InstructionLogEntry['lvl'];

/** The longest `msg` kept (a longer one is cut, marked with an ellipsis). */
export const maxLogMessage = 1000;

/** A fixed-size buffer of the latest entries, oldest first. */
export class LogRing {
  private readonly slots: (InstructionLogEntry | undefined)[];
  private next = 0;
  private count = 0;

  constructor(readonly size: number) {
    this.slots = new Array<InstructionLogEntry | undefined>(size);
  }

  push(entry: InstructionLogEntry): void {
    this.slots[this.next] = entry;
    this.next = (this.next + 1) % this.size;
    if (this.count < this.size) this.count++;
  }

  entries(): InstructionLogEntry[] {
    const out: InstructionLogEntry[] = [];
    const start = (this.next - this.count + this.size) % this.size;
    for (let k = 0; k < this.count; k++) out.push(this.slots[(start + k) % this.size] as InstructionLogEntry);
    return out;
  }
}

interface Listening {
  holders: number;
  subscription: BusSubscription;
  ring: LogRing;
}

export interface InstructionLogOptions {
  /** Events kept per realm (LOCUS_INSTRUCTION_LOG_SIZE). */
  size: number;
  now?: () => Date;
}

export class InstructionLog {
  private readonly realms = new Map<string, Listening>();
  private readonly now: () => Date;

  constructor(
    private readonly bus: EventBus,
    private readonly options: InstructionLogOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** Publishes an event of the realm's instructions; `tim` is now unless given. Never throws. */
  append(realm: string, entry: { id: string; lvl: LogLevel; msg: string; tim?: string }): void {
    const msg = entry.msg.length > maxLogMessage ? `${entry.msg.slice(0, maxLogMessage - 1)}…` : entry.msg;
    const event: InstructionLogEvent = { kind: 'log', realm, entry: { id: entry.id, lvl: entry.lvl, tim: entry.tim ?? this.now().toISOString(), msg } };
    this.bus.publish(realm, [event]);
  }

  /**
   * Keeps the realm's log events from now on, until the handle is released (each `listen` needs
   * its own `unsubscribe`).
   */
  listen(realm: string): BusSubscription {
    let listening = this.realms.get(realm);
    if (listening === undefined) {
      const ring = new LogRing(this.options.size);
      const subscription = this.bus.subscribe(realm, (message) => this.heard(realm, message));
      listening = { holders: 0, subscription, ring };
      this.realms.set(realm, listening);
    }
    listening.holders++;
    const held = listening;
    let released = false;
    return {
      unsubscribe: () => {
        if (released) return;
        released = true;
        held.holders--;
        if (held.holders === 0 && this.realms.get(realm) === held) {
          this.realms.delete(realm);
          held.subscription.unsubscribe();
        }
      },
    };
  }

  /** The realm's latest events, oldest first (empty while nobody listens to the realm here). */
  recent(realm: string): InstructionLogEntry[] {
    return this.realms.get(realm)?.ring.entries() ?? [];
  }

  /** Stops listening to every realm. */
  close(): void {
    for (const listening of this.realms.values()) listening.subscription.unsubscribe();
    this.realms.clear();
  }

  private heard(realm: string, message: RealmMessage): void {
    const listening = this.realms.get(realm);
    if (listening === undefined) return;
    if (message.kind === 'realm_deleted') {
      listening.ring = new LogRing(this.options.size);
      return;
    }
    for (const event of message.events) {
      if (event.kind === 'log') listening.ring.push(event.entry);
    }
  }
}
