/**
 * The v1 dispatcher: one typed table `typ → act → handler`, the same for `/v1/http`,
 * WebSocket and TCP, calling the same services as REST v2. Handlers return their
 * payload or throw a LocusError; the dispatcher alone turns either into a result, so an
 * action that fails answers `res: "err"` and the others of its message still run.
 */
import type { Principal } from '../../auth/authenticator.js';
import { parseIdAt, quote } from '../../domain/ids.js';
import type { Realm, Scope } from '../../domain/types.js';
import { invalid, type LocusError, toLocusError } from '../../errors.js';
import type { Access } from '../../service/access.js';
import type { AreaService } from '../../service/areas.js';
import { isoTime, type Clock } from '../../service/clock.js';
import type { ObjectService } from '../../service/objects.js';
import { parseSubscriptionFilter, type EventSink, type Subscriptions } from '../../service/subscriptions.js';
import { keyedById } from '../../service/views.js';
import { errorResult, successResult, type Action, type ActionResult, type ParsedAction } from './codec.js';

/** Who sends the actions, and where events for them can go. */
export interface Caller {
  principal: Principal;
  /** The connection, for subscriptions; null over `/v1/http`, which has no push channel. */
  sink: EventSink | null;
}

interface Outcome {
  dat: unknown;
  /** The next page's cursor (top-level `nxt` of the result). */
  nxt?: string | null;
}

type Dat = Record<string, unknown>;

/** An action on a realm's data: the realm is entered (401, 403, 429, 404) with `scope` first. */
interface RealmHandler {
  scope: Scope;
  /**
   * A write that hands its work to the store before its first await (the store applies
   * writes in call order): the actions after it may start while it is in flight, and
   * pipelined writes share a commit. Every other action starts once the ones before it
   * have settled, and the next starts once it has.
   */
  ordered?: true;
  run(dat: Dat, realm: Realm, caller: Caller): Promise<Outcome>;
}

/** An action that touches no realm. */
interface SystemHandler {
  scope: null;
  run(dat: Dat, caller: Caller): Promise<Outcome>;
}

type Handler = RealmHandler | SystemHandler;

/** How long a message runs before it lets the event loop turn (ms). */
const sliceMs = 4;

/** Objects written (handed to the store) before a message lets the event loop turn. */
const sliceMaxWrites = 1000;

/** The objects an ordered write hands to the store. */
function writeWeight(action: Action): number {
  const objects = action.dat.objects;
  return Array.isArray(objects) ? objects.length : 1;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type ActionTable = Readonly<Record<string, Readonly<Record<string, Handler>>>>;

export interface DispatcherDeps {
  access: Access;
  objects: ObjectService;
  areas: AreaService;
  subscriptions: Subscriptions;
  clock: Clock;
  /** Hears of failures that are not the client's (answered as `internal`). */
  onInternalError: (err: unknown) => void;
}

/** Allows only the given keys in `dat`. */
function onlyKeys(dat: Dat, allowed: readonly string[]): void {
  for (const key of Object.keys(dat)) {
    if (!allowed.includes(key)) throw invalid(`unknown key ${quote(key)} in dat; allowed: ${allowed.join(', ') || 'none'}`);
  }
}

/** `dat.id`, validated. */
function idOf(dat: Dat): string {
  return parseIdAt(dat.id, 'dat.id');
}

/** `dat` without `id`: the parameters of a list-like call on one object. */
function withoutId(dat: Dat): Dat {
  return Object.fromEntries(Object.entries(dat).filter(([key]) => key !== 'id'));
}

function sinkOf(caller: Caller): EventSink {
  if (caller.sink === null) throw invalid('subscriptions need a connection the server can push to: use WebSocket or TCP');
  return caller.sink;
}

function table(deps: DispatcherDeps): ActionTable {
  const { objects, areas, subscriptions } = deps;
  return {
    obj: {
      lis: {
        scope: 'read',
        run: async (dat, realm) => {
          const page = await objects.list(realm, dat);
          return { dat: keyedById(page.entries), nxt: page.next };
        },
      },
      get: {
        scope: 'read',
        run: async (dat, realm) => {
          onlyKeys(dat, ['id']);
          return { dat: await objects.get(realm, idOf(dat)) };
        },
      },
      upd: {
        scope: 'write',
        ordered: true,
        run: async (dat, realm) => {
          const change = await objects.upsert(realm, idOf(dat), dat);
          return { dat: { id: change.id } };
        },
      },
      blk: {
        scope: 'write',
        ordered: true,
        run: async (dat, realm) => {
          const { count } = await objects.bulk(realm, dat);
          return { dat: { count } };
        },
      },
      del: {
        scope: 'write',
        run: async (dat, realm) => {
          onlyKeys(dat, ['id']);
          const change = await objects.delete(realm, idOf(dat));
          return { dat: { id: change.id } };
        },
      },
      sea: {
        scope: 'read',
        run: async (dat, realm) => {
          const found = await objects.search(realm, dat);
          return { dat: keyedById(found.entries) };
        },
      },
      his: {
        scope: 'read',
        run: async (dat, realm) => {
          const page = await objects.history(realm, idOf(dat), withoutId(dat));
          return { dat: { id: page.id, locations: page.locations }, nxt: page.next };
        },
      },
    },
    are: {
      lis: {
        scope: 'read',
        run: async (dat, realm) => {
          const page = await areas.list(realm, dat);
          return { dat: keyedById(page.entries), nxt: page.next };
        },
      },
      get: {
        scope: 'read',
        run: async (dat, realm) => {
          onlyKeys(dat, ['id']);
          return { dat: await areas.get(realm, idOf(dat)) };
        },
      },
      cre: {
        scope: 'write',
        run: async (dat, realm) => {
          const change = await areas.create(realm, idOf(dat), dat, { labelRequired: false });
          return { dat: { id: change.id } };
        },
      },
      upd: {
        scope: 'write',
        run: async (dat, realm) => {
          const change = await areas.update(realm, idOf(dat), dat);
          return { dat: { id: change.id } };
        },
      },
      del: {
        scope: 'write',
        run: async (dat, realm) => {
          onlyKeys(dat, ['id']);
          const change = await areas.delete(realm, idOf(dat));
          return { dat: { id: change.id } };
        },
      },
    },
    sys: {
      pin: {
        scope: null,
        run: (dat) => {
          onlyKeys(dat, []);
          return Promise.resolve({ dat: { time: isoTime(deps.clock()) } });
        },
      },
      aut: {
        scope: null,
        run: () => {
          throw invalid('authentication is the first message of a connection ("Bearer <token>"), or the Authorization header over /v1/http');
        },
      },
    },
    sub: {
      sub: {
        scope: 'read',
        run: (dat, realm, caller) => {
          const sink = sinkOf(caller);
          const id = subscriptions.subscribe(sink, realm.id, parseSubscriptionFilter(dat));
          return Promise.resolve({ dat: { id } });
        },
      },
      uns: {
        scope: 'read',
        run: (dat, realm, caller) => {
          const sink = sinkOf(caller);
          onlyKeys(dat, ['id']);
          const ids = subscriptions.unsubscribe(sink, realm.id, dat.id === undefined ? undefined : parseIdAt(dat.id, 'dat.id'));
          return Promise.resolve({ dat: { ids } });
        },
      },
    },
  };
}

function lookup(handlers: ActionTable, typ: string, act: string): Handler | undefined {
  if (!Object.hasOwn(handlers, typ)) return undefined;
  const acts = handlers[typ] as Readonly<Record<string, Handler>>;
  return Object.hasOwn(acts, act) ? acts[act] : undefined;
}

/** The actions of one message, started (Dispatcher.start). */
export interface Started {
  /** Resolves once every action has begun (the reads answered, the writes handed to the store); never rejects. */
  started: Promise<void>;
  /** One result per action, in order. */
  results: Promise<ActionResult[]>;
}

/** An action under way: its result to come (in an object: an async function would wait for it). */
interface Begun {
  result: Promise<ActionResult>;
}

export class Dispatcher {
  private readonly handlers: ActionTable;

  constructor(private readonly deps: DispatcherDeps) {
    this.handlers = table(deps);
  }

  /** Runs the actions of one message in order and returns one result per action. */
  dispatch(actions: readonly ParsedAction[], caller: Caller): Promise<ActionResult[]> {
    return this.start(actions, caller).results;
  }

  /**
   * Starts the actions of one message in order. Each waits for the ones before it (and
   * for `after`: the connection's messages before this one), except an `ordered` write,
   * which only waits for them to have begun; so once `started` resolves, a connection may
   * start its next message: its actions see the effects of these (the store applies
   * writes in call order), and its writes join theirs in one commit.
   */
  start(actions: readonly ParsedAction[], caller: Caller, after: Promise<unknown> = Promise.resolve()): Started {
    const begun = this.begin(actions, caller, after);
    return {
      // Never rejects: a failure (there should be none: failures are results) is the results'.
      started: begun.then(
        () => undefined,
        () => undefined,
      ),
      results: begun.then((all) => Promise.all(all.map((action) => action.result))),
    };
  }

  private async begin(actions: readonly ParsedAction[], caller: Caller, after: Promise<unknown>): Promise<Begun[]> {
    const begun: Begun[] = [];
    // What an action that is not an ordered write waits for: the messages before (`after`)
    // and the ordered writes begun since the last such action (every other action before
    // it has settled, for each one waits on its own result). Kept as a list that is
    // emptied at each wait, so a message costs O(n) in its actions, not O(n²).
    let unsettled: Promise<unknown>[] = [after];
    let sliceStart = performance.now();
    let sliceWrites = 0;
    for (const parsed of actions) {
      // A long message gives the event loop back now and then: health checks, other
      // connections and timers keep their pace while it runs. Writes handed to the store
      // count too: they are committed together in the next turn, in one go.
      if (sliceWrites >= sliceMaxWrites || performance.now() - sliceStart > sliceMs) {
        await yieldToEventLoop();
        sliceStart = performance.now();
        sliceWrites = 0;
      }
      if (!parsed.ok) {
        // Counted like any action: invalid input is no way around the rate limit.
        const refused = await this.refusedByRateLimit(caller.principal);
        const error = refused ?? parsed.error;
        begun.push({ result: Promise.resolve(errorResult(parsed.typ, parsed.act, parsed.rid, error)) });
        continue;
      }
      const handler = lookup(this.handlers, parsed.action.typ, parsed.action.act);
      const ordered = handler !== undefined && handler.scope !== null && handler.ordered === true;
      // Results never reject (failures are results).
      if (!ordered && unsettled.length > 0) {
        await (unsettled.length === 1 ? unsettled[0] : Promise.all(unsettled));
        unsettled = [];
      }
      const action = await this.run(parsed.action, handler, caller);
      begun.push(action);
      if (ordered) {
        unsettled.push(action.result);
        sliceWrites += writeWeight(parsed.action);
      } else {
        await action.result;
      }
    }
    return begun;
  }

  /** Takes one action from the caller's rate budget; the error when there is none left. */
  private async refusedByRateLimit(principal: Principal): Promise<LocusError | null> {
    try {
      await this.deps.access.countAction(principal);
      return null;
    } catch (err) {
      return toLocusError(err);
    }
  }

  /** Resolves once the action has begun (its realm entered, its handler called). */
  private async run(action: Action, handler: Handler | undefined, caller: Caller): Promise<Begun> {
    try {
      if (handler === undefined) {
        // An unknown action costs its caller as much as a known one.
        await this.deps.access.countAction(caller.principal);
        throw this.unknown(action);
      }
      let outcome: Promise<Outcome>;
      if (handler.scope === null) {
        await this.deps.access.countAction(caller.principal);
        outcome = handler.run(action.dat, caller);
      } else {
        const realmId = action.rea ?? caller.principal.realm;
        if (realmId === null) throw invalid('this token belongs to no realm: name the realm in rea');
        // issue #20 (tenants): enterRealm takes a `per` right now; the core rewrite passes V1Handler.need.
        const realm = await this.deps.access.enterRealm(caller.principal, realmId, handler.scope === 'read' ? 'R' : 'U');
        outcome = handler.run(action.dat, realm, caller);
      }
      return {
        result: outcome.then(
          (done) => successResult(action, done.dat, done.nxt),
          (err: unknown) => this.failed(action, err),
        ),
      };
    } catch (err) {
      return { result: Promise.resolve(this.failed(action, err)) };
    }
  }

  private failed(action: Action, err: unknown): ActionResult {
    const error = toLocusError(err);
    if (error.code === 'internal') this.deps.onInternalError(err);
    return errorResult(action.typ, action.act, action.rid, error);
  }

  private unknown(action: Action): Error {
    if (!Object.hasOwn(this.handlers, action.typ)) {
      return invalid(`unknown typ ${quote(action.typ)}; known: ${Object.keys(this.handlers).join(', ')}`);
    }
    const acts = Object.keys(this.handlers[action.typ] ?? {});
    return invalid(`unknown act ${quote(action.act)} for typ ${action.typ}; known: ${acts.join(', ')}`);
  }
}
