/**
 * The v1 observer of the metrics (transport/actions/v1-observer.ts): actions by transport,
 * `typ`, `act` and result code, with their duration; socket connections opened and open;
 * events dropped for slow readers; refusals (401/403 as authentication failures, 429 as rate
 * limited, protocol `v1`). A `typ` or `act` the handler table does not know is `unknown`, so
 * a client cannot add series. Each (transport, typ, act) keeps its cells at hand: an action
 * costs a string comparison or three (a message like the one before it) or a few map lookups, and two additions.
 */
import type { Gauge } from 'prom-client';
import type { LocusError } from '../../errors.js';
import type { SocketTransport, V1Observer, V1Transport } from '../../transport/actions/v1-observer.js';
import type { CounterCell, HistogramCell, LeanCounter, LeanHistogram } from './lean-series.js';

export const UNKNOWN_ACTION = 'unknown';

export interface V1Series {
  actions: LeanCounter;
  duration: LeanHistogram;
  connectionsOpen: Gauge;
  connectionsOpened: LeanCounter;
  subscriberDrops: LeanCounter;
  rateLimited: LeanCounter;
  authFailures: LeanCounter;
}

interface StatusCells {
  answered: CounterCell;
  refusal: CounterCell | null;
}

interface ActionRow {
  duration: HistogramCell;
  byStatus: Map<number, StatusCells>;
  typ: string;
  act: string;
}

export class V1Metrics implements V1Observer {
  /** transport → typ → act → row (typ and act as labelled: known ones or `unknown`). */
  private readonly rows = new Map<V1Transport, Map<string, Map<string, ActionRow>>>();
  /** The row of the last message and what it was looked up by: a frame's messages are mostly alike. */
  private last: { transport: V1Transport; typ: string | null; act: string | null; row: ActionRow } | null = null;

  /** `known`: the acts of each typ the handler table has. */
  constructor(
    private readonly series: V1Series,
    private readonly known: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  answered(transport: V1Transport, typ: string | null, act: string | null, status: number, readAt: number): void {
    const row = this.rowOf(transport, typ, act);
    row.duration.observe((performance.now() - readAt) / 1000);
    let cells = row.byStatus.get(status);
    if (cells === undefined) {
      cells = { answered: this.series.actions.cell(transport, row.typ, row.act, String(status)), refusal: this.refusal(status, 'invalid') };
      row.byStatus.set(status, cells);
    }
    cells.answered.inc();
    cells.refusal?.inc();
  }

  connectionOpened(transport: SocketTransport): void {
    this.series.connectionsOpen.inc({ transport });
    this.series.connectionsOpened.cell(transport).inc();
  }

  connectionClosed(transport: SocketTransport): void {
    this.series.connectionsOpen.dec({ transport });
  }

  dropped(transport: SocketTransport, count: number): void {
    this.series.subscriberDrops.cell(transport).inc(count);
  }

  signInRefused(_transport: SocketTransport, error: LocusError, tokenGiven: boolean): void {
    this.refusal(error.status, tokenGiven ? 'invalid' : 'missing')?.inc();
  }

  /** The refusal counter a result code counts in, if any. */
  private refusal(status: number, unauthorized: 'missing' | 'invalid'): CounterCell | null {
    if (status === 429) return this.series.rateLimited.cell('v1');
    if (status === 403) return this.series.authFailures.cell('v1', 'forbidden');
    if (status === 401) return this.series.authFailures.cell('v1', unauthorized);
    return null;
  }

  private rowOf(transport: V1Transport, typ: string | null, act: string | null): ActionRow {
    const last = this.last;
    if (last !== null && last.typ === typ && last.act === act && last.transport === transport) return last.row;
    const row = this.lookUp(transport, typ, act);
    this.last = { transport, typ, act, row };
    return row;
  }

  private lookUp(transport: V1Transport, typ: string | null, act: string | null): ActionRow {
    const acts = typ === null ? undefined : this.known.get(typ);
    const typLabel = acts === undefined ? UNKNOWN_ACTION : (typ as string);
    const actLabel = acts !== undefined && act !== null && acts.has(act) ? act : UNKNOWN_ACTION;
    let byTyp = this.rows.get(transport);
    if (byTyp === undefined) {
      byTyp = new Map();
      this.rows.set(transport, byTyp);
    }
    let byAct = byTyp.get(typLabel);
    if (byAct === undefined) {
      byAct = new Map();
      byTyp.set(typLabel, byAct);
    }
    let row = byAct.get(actLabel);
    if (row === undefined) {
      row = { duration: this.series.duration.cell(transport, typLabel, actLabel), byStatus: new Map(), typ: typLabel, act: actLabel };
      byAct.set(actLabel, row);
    }
    return row;
  }
}
