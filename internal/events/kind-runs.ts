/**
 * How the NATS bus cuts one publish call's events into messages: one message per kind
 * (subject `locus.<realm>.evt.<kind>`), not one per event. The write path interleaves kinds
 * (`obj a, loc a, obj b, loc b, exi b, ent b, …`), so runs of consecutive events of one kind
 * would be one event each; instead the events are gathered by kind and the kinds sent in a
 * fixed order (obj, loc, exi, ent, del, are, cst, pub: the order of one object's events in
 * a write). That reorders events of different objects past each other, never two events of
 * the same object (or area, or pub/sub id): when an event would have to go before an earlier
 * event of its key that sits in a later kind, the set gathered so far is sent first and a new
 * set begins. So every subscriber still sees each object's events in publish order, and a
 * bulk write of N objects travels in at most four messages.
 */
import type { LocusEvent } from './port.js';

export interface KindRun {
  kind: LocusEvent['kind'];
  events: LocusEvent[];
}

/** What an event's order is kept with: its object (or pub/sub id), or its area. */
function keyOf(event: LocusEvent): string {
  switch (event.kind) {
    case 'loc':
    case 'obj':
      return `o${event.object.id}`;
    case 'ent':
    case 'exi':
    case 'cst':
      return `o${event.object}`;
    case 'pub':
      return `o${event.idp}`;
    case 'are':
      return `a${event.area.id}`;
    case 'del':
      return 'object' in event ? `o${event.object}` : `a${event.area}`;
    case 'ins':
      return `i${event.id}`;
    case 'log':
      return `l${event.entry.id}`;
    case 'tsk':
      return `t${event.change.id}`;
  }
}

/** Send order of the kinds. */
const rank: Record<LocusEvent['kind'], number> = { obj: 0, loc: 1, exi: 2, ent: 3, del: 4, are: 5, cst: 6, pub: 7, ins: 8, log: 9, tsk: 10 };
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
