/**
 * The v1 dispatcher: one typed table `typ → act → handler` (handlers/index.ts), the same for
 * HTTP, WebSocket and TCP, calling the same services as REST v2. It reads the envelope,
 * finds the handler, enters the realm the message names (401, 403, 429, 404 `unknown realm
 * <id>`), runs the handler, and turns its answer or its LocusError into the reply: a
 * message that fails answers `res:"err"` and the others of its frame still run.
 *
 * Replies (compat 3.4, 3.5; decisions "Replies to messages without `cid`"): one per message,
 * in request order, echoing its `cid` (or the extension's `rid`) when it has one; a message
 * without one gets the same reply without it (the seed's messages carry none, and a seed
 * client must still get its list). The exception is a successful `set` (a null answer),
 * Hivekit's fire-and-forget write: no reply without a `cid` (or `rid`), and none over HTTP
 * even with one (compat 1.3). Errors are always replied (with their own `typ`, never `sys`).
 * The official client sends no other message without `cid`, so it sees no change.
 */
import type { Principal } from '../../auth/principal.js';
import { quote } from '../../domain/ids.js';
import type { Realm } from '../../domain/types.js';
import { invalid, type LocusError, toLocusError } from '../../errors.js';
import type { Access } from '../../service/access.js';
import type { ActionTracing, Begun } from './action-tracing.js';
import { errorReply, successReply, type Echo, type ParsedItem, type V1Reply } from './codec.js';
import type { V1Answer, V1Batch, V1Caller, V1Handler, V1HandlerTable, V1Message } from './v1-handler.js';
import type { V1Observer } from './v1-observer.js';

/** How long a frame runs before it lets the event loop turn (ms). */
const sliceMs = 4;

/** Objects written (handed to the store) before a frame lets the event loop turn. */
const sliceMaxWrites = 1000;

const ignore = (): void => undefined;

/** A single message's replies: none for a null reply. */
const listOf = (reply: V1Reply | null): V1Reply[] => (reply === null ? [] : [reply]);

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface DispatcherDeps {
  access: Access;
  handlers: V1HandlerTable;
  /** Hears of failures that are not the client's (answered as `internal`). */
  onInternalError: (err: unknown) => void;
  /** A span per action (observability/tracing); absent while tracing is off. */
  tracing?: ActionTracing;
  /** Hears of each message answered (metrics). */
  observer?: V1Observer;
}

function lookup(handlers: V1HandlerTable, typ: string, act: string): V1Handler | undefined {
  if (!Object.hasOwn(handlers, typ)) return undefined;
  const acts = handlers[typ] as Readonly<Record<string, V1Handler>>;
  return Object.hasOwn(acts, act) ? acts[act] : undefined;
}

/** The messages of one frame, started (Dispatcher.start). */
export interface Started {
  /** Resolves once every message has begun (the reads answered, the writes handed to the store); never rejects. */
  started: Promise<void>;
  /** The replies to send, in request order (none for a successful `set` without `cid`, nor over HTTP). */
  replies: Promise<V1Reply[]>;
}

/** A message of a run (Dispatcher.runOf). */
interface RunMessage {
  message: V1Message;
  echo: Echo;
  handler: V1Handler;
}

/**
 * The one place a v1 message enters its realm: `need` R enters for reading, C/U/D for
 * writing (opaque tokens' scopes; JWT rights narrow further in Access).
 */
function enterRealm(access: Access, principal: Principal, realmName: string, handler: V1Handler): Promise<Realm> {
  return access.enterRealm(principal, realmName, handler.need);
}

export class Dispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /** Runs the messages of one frame in order and returns the replies to send. */
  dispatch(items: readonly ParsedItem[], caller: V1Caller): Promise<V1Reply[]> {
    return this.start(items, caller).replies;
  }

  /**
   * Starts the messages of one frame in order (the ordering contract: service/write-order.ts).
   * Each waits for the ones before it (and for `after`: the connection's frames before this
   * one), except an `ordered` write, which only waits for them to have begun; so once
   * `started` resolves, a connection may start its next frame, whose writes join these in
   * one commit.
   */
  start(items: readonly ParsedItem[], caller: V1Caller, after: Promise<unknown> = Promise.resolve()): Started {
    if (this.deps.observer !== undefined) caller = { ...caller, readAt: performance.now() };
    const only = items.length === 1 ? items[0] : undefined;
    if (only?.ok === true) return this.startOne(only.message, only.echo, caller, after);
    const begun = this.begin(items, caller, after);
    return {
      // Never rejects: a failure (there should be none: failures are replies) is the replies'.
      started: begun.then(
        () => undefined,
        () => undefined,
      ),
      replies: begun.then(async (all) => {
        const replies: V1Reply[] = [];
        for (const settled of await Promise.all(all.map((message) => ('reply' in message ? message.reply : message.replies)))) {
          if (Array.isArray(settled)) {
            for (const reply of settled) if (reply !== null) replies.push(reply);
          } else if (settled !== null) {
            replies.push(settled);
          }
        }
        return replies;
      }),
    };
  }

  /**
   * start for a frame of one parsed message (a tracker's report): what begin does for it,
   * without the time slicing and the lists a longer frame needs. An ordered write begins at
   * once; any other message once `after` has settled.
   */
  private startOne(message: V1Message, echo: Echo, caller: V1Caller, after: Promise<unknown>): Started {
    const handler = lookup(this.deps.handlers, message.typ, message.act);
    const ordered = handler !== undefined && handler.realm !== 'none' && handler.ordered === true;
    const begun = ordered ? this.run(message, echo, handler, caller) : after.then(() => this.run(message, echo, handler, caller));
    return {
      started: begun.then(ignore, ignore),
      replies: begun.then(({ reply }) => reply.then(listOf)),
    };
  }

  private async begin(items: readonly ParsedItem[], caller: V1Caller, after: Promise<unknown>): Promise<Begun[]> {
    const begun: Begun[] = [];
    // What a message that is not an ordered write waits for: the frames before (`after`)
    // and the ordered writes begun since the last such message (every other message before
    // it has settled, for each one waits on its own reply). Kept as a list that is emptied
    // at each wait, so a frame costs O(n) in its messages, not O(n²).
    let unsettled: Promise<unknown>[] = [after];
    let sliceStart = performance.now();
    let sliceWrites = 0;
    for (let at = 0; at < items.length; at++) {
      const item = items[at] as ParsedItem;
      // A long frame gives the event loop back now and then: health checks, other
      // connections and timers keep their pace while it runs. Writes handed to the store
      // count too: they are committed together in the next turn, in one go.
      if (sliceWrites >= sliceMaxWrites || performance.now() - sliceStart > sliceMs) {
        await yieldToEventLoop();
        sliceStart = performance.now();
        sliceWrites = 0;
      }
      if (!item.ok) {
        // Counted like any message: invalid input is no way around the rate limit.
        const refused = (await this.refusedByRateLimit(caller.principal)) ?? item.error;
        this.observe(caller, item.typ, item.act, refused.status);
        begun.push({ reply: Promise.resolve(errorReply(item.typ, item.act, item.echo, refused)) });
        continue;
      }
      const handler = lookup(this.deps.handlers, item.message.typ, item.message.act);
      const ordered = handler !== undefined && handler.realm !== 'none' && handler.ordered === true;
      if (ordered && handler.batch !== undefined) {
        // A run of writes that can go to the store together (V1Handler.batch).
        const run = this.runOf(items, at, handler, sliceMaxWrites - sliceWrites);
        if (run.length > 1) {
          const tracing = this.deps.tracing;
          const replies = await (tracing === undefined
            ? this.runBatch(run, handler, caller)
            : tracing.action((run[0] as RunMessage).message, true, run.length, caller, () => this.runBatch(run, handler, caller)));
          begun.push(replies);
          unsettled.push(replies.replies);
          sliceWrites += run.length;
          at += run.length - 1;
          continue;
        }
      }
      // Replies never reject (failures are replies).
      if (!ordered && unsettled.length > 0) {
        await (unsettled.length === 1 ? unsettled[0] : Promise.all(unsettled));
        unsettled = [];
      }
      const message = await this.run(item.message, item.echo, handler, caller);
      begun.push(message);
      if (ordered) {
        unsettled.push(message.reply);
        sliceWrites += handler.weight?.(item.message) ?? 1;
      } else {
        await message.reply;
      }
    }
    return begun;
  }

  /**
   * The messages from `at` on that may run with it as one batch: parsed, of handlers of the
   * same batch group and right, naming the same realm (the same value of the realm key), each
   * with a string `id` not seen before in the run; at most `max`.
   */
  private runOf(items: readonly ParsedItem[], at: number, first: V1Handler, max: number): RunMessage[] {
    const group = first.batch?.group;
    const start = items[at];
    if (group === undefined || start === undefined || !start.ok) return [];
    const key = first.realm;
    const realmValue = start.message.raw[key];
    const run: RunMessage[] = [];
    const ids = new Set<string>();
    for (let k = at; k < items.length && run.length < Math.max(1, max); k++) {
      const item = items[k] as ParsedItem;
      if (!item.ok) break;
      const handler = lookup(this.deps.handlers, item.message.typ, item.message.act);
      if (handler?.batch?.group !== group || handler.realm !== key || handler.need !== first.need || item.message.raw[key] !== realmValue) break;
      const id = item.message.raw.id;
      if (typeof id !== 'string' || ids.has(id)) break;
      ids.add(id);
      run.push({ message: item.message, echo: item.echo, handler });
    }
    return run;
  }

  /**
   * Enters the realm for the messages of a run (the realm looked up once, each message
   * counted: Access.enterRealmEach), then runs those admitted as one batch. Every message
   * gets its own reply, in order; one that fails fails alone.
   */
  private async runBatch(run: readonly RunMessage[], first: V1Handler, caller: V1Caller): Promise<{ replies: Promise<(V1Reply | null)[]> }> {
    const out: (V1Reply | null)[] = new Array<V1Reply | null>(run.length).fill(null);
    let realm: Realm | null;
    let errors: (LocusError | null)[];
    try {
      // Every message of a run names the same realm (runOf).
      ({ realm, errors } = await this.deps.access.enterRealmEach(caller.principal, this.realmNameOf((run[0] as RunMessage).message, first, caller), first.need, run.length));
    } catch (err) {
      run.forEach(({ message, echo }, k) => (out[k] = this.failed(message, echo, err, caller)));
      return { replies: Promise.resolve(out) };
    }
    const admitted: number[] = [];
    run.forEach(({ message, echo }, k) => {
      const error = errors[k];
      if (error === null || error === undefined) admitted.push(k);
      else out[k] = this.failed(message, echo, error, caller);
    });
    if (realm === null || admitted.length === 0) return { replies: Promise.resolve(out) };
    const settle = (results: readonly (V1Answer | Error)[] | null, failure: unknown): (V1Reply | null)[] => {
      admitted.forEach((k, j) => {
        const { message, echo } = run[k] as RunMessage;
        const answer = results === null ? undefined : results[j];
        if (results === null) out[k] = this.failed(message, echo, failure, caller);
        else if (answer === undefined) out[k] = this.failed(message, echo, new Error('a batch gave no answer for a message'), caller);
        else if (answer instanceof Error) out[k] = this.failed(message, echo, answer, caller);
        else out[k] = this.succeeded(message, echo, answer, caller);
      });
      return out;
    };
    let answers: Promise<(V1Answer | Error)[]>;
    try {
      answers = (first.batch as V1Batch).run(
        admitted.map((k) => (run[k] as RunMessage).message),
        realm,
        caller,
      );
    } catch (err) {
      return { replies: Promise.resolve(settle(null, err)) };
    }
    return {
      replies: answers.then(
        (results) => settle(results, null),
        (err: unknown) => settle(null, err),
      ),
    };
  }

  /** Takes one message from the caller's rate budget; the error when there is none left. */
  private async refusedByRateLimit(principal: Principal): Promise<LocusError | null> {
    try {
      await this.deps.access.countAction(principal);
      return null;
    } catch (err) {
      return toLocusError(err);
    }
  }

  /** The realm a message names (`rea` or `id`, as its handler says); null for `none`, after counting the message. */
  private async realmOf(message: V1Message, handler: V1Handler, caller: V1Caller): Promise<Realm | null> {
    if (handler.realm === 'none') {
      await this.deps.access.countAction(caller.principal);
      return null;
    }
    return enterRealm(this.deps.access, caller.principal, this.realmNameOf(message, handler, caller), handler);
  }

  /** The name of the realm a message names (its handler's realm key, else the principal's realm); throws when there is none. */
  private realmNameOf(message: V1Message, handler: V1Handler, caller: V1Caller): string {
    const key = handler.realm;
    const given = message.raw[key];
    if (given === undefined || given === null) {
      if (caller.principal.realm === null) throw invalid(`${key} is required: the id of the realm`);
      return caller.principal.realm;
    }
    if (typeof given !== 'string') throw invalid(`${key} must be a realm id (a string)`);
    return given;
  }

  /** Resolves once the message has begun (its realm entered, its handler called); in a span while tracing is on. */
  private run(message: V1Message, echo: Echo, handler: V1Handler | undefined, caller: V1Caller): Promise<{ reply: Promise<V1Reply | null> }> {
    const tracing = this.deps.tracing;
    if (tracing === undefined) return this.runMessage(message, echo, handler, caller);
    return tracing.action(message, handler !== undefined, 1, caller, () => this.runMessage(message, echo, handler, caller));
  }

  private async runMessage(message: V1Message, echo: Echo, handler: V1Handler | undefined, caller: V1Caller): Promise<{ reply: Promise<V1Reply | null> }> {
    try {
      if (handler === undefined) {
        // An unknown action costs its caller as much as a known one.
        await this.deps.access.countAction(caller.principal);
        throw this.unknown(message);
      }
      const realm = await this.realmOf(message, handler, caller);
      const answer = handler.run(message, realm, caller);
      return {
        reply: answer.then(
          (done) => this.succeeded(message, echo, done, caller),
          (err: unknown) => this.failed(message, echo, err, caller),
        ),
      };
    } catch (err) {
      return { reply: Promise.resolve(this.failed(message, echo, err, caller)) };
    }
  }

  private succeeded(message: V1Message, echo: Echo, answer: V1Answer, caller: V1Caller): V1Reply | null {
    this.observe(caller, message.typ, message.act, 200);
    // A successful `set`: no reply over HTTP (the client makes its own, compat 1.3); on a
    // socket only for a `cid` or `rid` (each gets exactly one reply). Any other message is
    // answered, with or without a correlation id.
    if (answer === null && (caller.connection === null || (echo.cid === undefined && echo.rid === undefined))) return null;
    return successReply(message, echo, answer);
  }

  private failed(message: V1Message, echo: Echo, err: unknown, caller: V1Caller): V1Reply {
    const error = toLocusError(err);
    if (error.code === 'internal') this.deps.onInternalError(err);
    this.observe(caller, message.typ, message.act, error.status);
    return errorReply(message.typ, message.act, echo, error);
  }

  /** Tells the observer (if any) that a message was answered. */
  private observe(caller: V1Caller, typ: string | null, act: string | null, status: number): void {
    const observer = this.deps.observer;
    if (observer !== undefined) observer.answered(caller.connection?.transport ?? 'http', typ, act, status, caller.readAt ?? performance.now());
  }

  private unknown(message: V1Message): Error {
    const { handlers } = this.deps;
    if (!Object.hasOwn(handlers, message.typ)) {
      return invalid(`unknown typ ${quote(message.typ)}; known: ${Object.keys(handlers).join(', ')}`);
    }
    const acts = Object.keys(handlers[message.typ] ?? {});
    return invalid(`unknown act ${quote(message.act)} for typ ${message.typ}; known: ${acts.join(', ')}`);
  }
}
