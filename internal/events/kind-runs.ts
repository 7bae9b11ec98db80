/**
 * How the NATS bus cuts one publish call's events into messages: one message per kind
 * (subject `locus.<realm>.evt.<kind>`), not one per event. A publish call may interleave kinds
 * (`exited a, entered a, exited b, entered b, …`: the geofence engine's crossings), so runs of consecutive
 * events of one kind would be one event each; instead the events are gathered by kind and the
 * kinds sent in a fixed order (object, exited, entered, area, cst, pub, …: the order of one object's
 * events). That reorders events of different objects past each other, never two events of
 * the same object (or area, or pub/sub id): when an event would have to go before an earlier
 * event of its key that sits in a later kind, the set gathered so far is sent first and a new
 * set begins. So every subscriber still sees each object's events in publish order; a bulk
 * write of N objects travels as one message of change records, and its crossings in at most two.
 */
import type { LocusEvent } from './port.js';

export interface KindRun {
  kind: LocusEvent['kind'];
  events: LocusEvent[];
}

/** What an event's order is kept with: its object (or pub/sub id), or its area. */
function keyOf(event: LocusEvent): string {
  switch (event.kind) {
    case 'object':
      return `o${event.change.id}`;
    case 'entered':
    case 'exited':
    case 'cst':
      return `o${event.object}`;
    case 'pub':
      return `o${event.idp}`;
    case 'area':
      return `a${event.change.id}`;
    case 'ins':
      return `i${event.id}`;
    case 'log':
      return `l${event.entry.id}`;
    case 'tsk':
      return `t${event.change.id}`;
  }
}

/** Send order of the kinds. */
const rank: Record<LocusEvent['kind'], number> = { object: 0, exited: 1, entered: 2, area: 3, cst: 4, pub: 5, ins: 6, log: 7, tsk: 8 };
const kinds = Object.keys(rank) as LocusEvent['kind'][];

/** The events in runs of one kind each, in the order to send them; see the module comment. */
export function kindRuns(events: readonly LocusEvent[]): KindRun[] {
  const first = events[0];
  if (first === undefined) return [];
  // The common single-kind call: one run, no bookkeeping.
  if (events.every((event) => event.kind === first.kind)) return [{ kind: first.kind, events: [...events] }];
  const out: KindRun[] = [];
  let set = new Map<LocusEvent['kind'], LocusEvent[]>();
  /** Per key, the highest kind rank it has in the open set. */
  let highest = new Map<string, number>();
  const close = (): void => {
    for (const kind of kinds) {
      const list = set.get(kind);
      if (list !== undefined) out.push({ kind, events: list });
    }
  };
  for (const event of events) {
    const key = keyOf(event);
    const r = rank[event.kind];
    let top = highest.get(key);
    if (top !== undefined && top > r) {
      close();
      set = new Map();
      highest = new Map();
      top = undefined;
    }
    const list = set.get(event.kind);
    if (list === undefined) set.set(event.kind, [event]);
    else list.push(event);
    if (top === undefined || top < r) highest.set(key, r);
  }
  close();
  return out;
}
