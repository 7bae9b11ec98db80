/**
 * The v1 action protocol on the wire (Hivekit's envelope, docs/protocol.md), for every
 * transport: a frame is a JSON array of messages, each an object with `typ`, `act`, an
 * optional `cid` (echoed in its one reply), the locus extension `rid` (echoed too) and the
 * entity's fields as top-level keys. Unknown keys are ignored. A reply is `{typ, act, cid?,
 * res:"suc", …answer}` or `{typ, act, cid?, res:"err", err:<text>, erc:<HTTP status>}`;
 * an error of the frame itself is one element `{res:"err", err, erc}`. This module only turns
 * text into messages and replies into text; it knows nothing of sockets or services.
 */
import type { BuildInfo } from '../../build-info.js';
import { describe, isJsonObject } from '../../domain/ids.js';
import { splitRealmKey } from '../../domain/realm-key.js';
import { invalid, LocusError, tooLarge } from '../../errors.js';
import type { SubscriptionEvent } from '../../domain/events.js';
import { objectView } from '../../service/views.js';
import type { V1Answer, V1Message } from './v1-handler.js';

/** A client-chosen correlation id (`cid`, or the extension `rid`), echoed as given. */
export type Correlation = string | number;

/** What a reply echoes of its message. */
export interface Echo {
  cid?: Correlation;
  rid?: Correlation;
}

/** One element of a frame: a message, or why it is not one (answered with `res:"err"`). */
export type ParsedItem =
  | { ok: true; message: V1Message; echo: Echo }
  | { ok: false; typ: string | null; act: string | null; echo: Echo; error: LocusError };

export type ParsedFrame = { ok: true; items: ParsedItem[] } | { ok: false; error: LocusError };

/** One element of a reply frame. */
export type V1Reply = Readonly<Record<string, unknown>>;

const isCorrelation = (value: unknown): value is Correlation =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function parseItem(value: unknown, index: number): ParsedItem {
  if (!isJsonObject(value)) {
    return { ok: false, typ: null, act: null, echo: {}, error: invalid(`message ${index} must be a JSON object with typ and act (got ${describe(value)})`) };
  }
  const typ = typeof value.typ === 'string' ? value.typ : null;
  const act = typeof value.act === 'string' ? value.act : null;
  const echo: Echo = {};
  if (isCorrelation(value.cid)) echo.cid = value.cid;
  if (isCorrelation(value.rid)) echo.rid = value.rid;
  const fail = (message: string): ParsedItem => ({ ok: false, typ, act, echo, error: invalid(`message ${index}: ${message}`) });
  if (typ === null) return fail('typ must be a string such as "obj"');
  if (act === null) return fail('act must be a string such as "rea"');
  if (value.cid !== undefined && echo.cid === undefined) return fail(`cid must be a string or a number (got ${describe(value.cid)})`);
  if (value.rid !== undefined && echo.rid === undefined) return fail(`rid must be a string or a number (got ${describe(value.rid)})`);
  const message: V1Message = { typ, act, raw: value };
  if (echo.cid !== undefined) message.cid = String(echo.cid);
  return { ok: true, message, echo };
}

/** The default of LOCUS_MAX_ACTIONS: messages in one frame. */
export const defaultMaxActions = 10_000;

/**
 * Reads an already parsed JSON value as a frame (`/v1/http` bodies arrive parsed). A frame
 * of more than `maxActions` messages is refused whole, before any is read.
 */
export function parseFrameValue(value: unknown, maxActions = defaultMaxActions): ParsedFrame {
  if (!Array.isArray(value)) {
    return { ok: false, error: invalid('a frame must be a JSON array of messages such as [{"typ":"sys","act":"hbt","cid":"1"}]') };
  }
  if (value.length > maxActions) {
    return {
      ok: false,
      error: tooLarge(`a frame has ${value.length} messages; at most ${maxActions} are allowed (send several frames, or obj/blk)`),
    };
  }
  return { ok: true, items: value.map((item, index) => parseItem(item, index)) };
}

/** Reads one WebSocket text frame or TCP line. */
export function parseFrame(text: string, maxActions = defaultMaxActions): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: invalid('the frame is not valid JSON', 'invalid_json') };
  }
  return parseFrameValue(value, maxActions);
}

function withEcho(reply: Record<string, unknown>, echo: Echo): Record<string, unknown> {
  if (echo.cid !== undefined) reply.cid = echo.cid;
  if (echo.rid !== undefined) reply.rid = echo.rid;
  return reply;
}

/** A success reply: `typ`, `act`, the echoed ids, `res:"suc"`, then the answer's keys. */
export function successReply(message: V1Message, echo: Echo, answer: V1Answer): V1Reply {
  const reply = withEcho({ typ: message.typ, act: message.act }, echo);
  reply.res = 'suc';
  if (answer !== null) {
    for (const key of Object.keys(answer)) {
      if (key !== 'typ' && key !== 'act' && key !== 'cid' && key !== 'rid' && key !== 'res') reply[key] = answer[key];
    }
  }
  return reply;
}

/** An error reply: its message's `typ` and `act` (when readable), the echoed ids, `err` and `erc`. */
export function errorReply(typ: string | null, act: string | null, echo: Echo, err: LocusError): V1Reply {
  const reply: Record<string, unknown> = {};
  if (typ !== null) reply.typ = typ;
  if (act !== null) reply.act = act;
  withEcho(reply, echo);
  reply.res = 'err';
  reply.err = err.message;
  reply.erc = err.status;
  return reply;
}

/** Replies as one frame. */
export function encodeReplies(replies: readonly V1Reply[]): string {
  return JSON.stringify(replies);
}

/**
 * An error that belongs to no message: not JSON, not an array, too large, not UTF-8, token
 * revoked, slow consumer, shutdown. No `typ` (compat 3.5: a `typ:"sys"` error would reach a
 * Hivekit application as an unknown system action, without its text).
 */
export function frameError(err: LocusError): { res: 'err'; err: string; erc: number } {
  return { res: 'err', err: err.message, erc: err.status };
}

export function encodeFrameError(err: LocusError): string {
  return JSON.stringify([frameError(err)]);
}

export function encodeAuthSuccess(build: BuildInfo): string {
  return JSON.stringify([{ typ: 'sys', act: 'aut', res: 'suc', dat: { version: build.version, buildDate: build.buildDate } }]);
}

/**
 * A failed sign-in (`unauthorized`; `rate_limited` when the address has failed too often): its
 * message and the catalogue's status; the connection stays open for another `Bearer` frame.
 */
export function encodeAuthFailure(error: LocusError): string {
  return JSON.stringify([{ typ: 'sys', act: 'aut', res: 'err', err: error.message, erc: error.status }]);
}

/** Pushed messages (subscription pushes, pub/sub deliveries) as one frame. */
export function encodePush(messages: readonly object[]): string {
  return JSON.stringify(messages);
}

/**
 * Every subscriber of an event gets the same text: encoded once, and held until the next
 * turn of the event loop (the event bus hands a message to every local subscriber in one
 * turn). Not a WeakMap keyed by event: at 10,000 events/s its entries made the young
 * generation's collections markedly slower (V8 processes each weak entry), and these
 * texts are needed for microseconds. Likewise the messages of a list of events that
 * several subscribers get whole (those without filters get the bus's list itself): cut
 * and joined once, the same strings written to each.
 */
let encoded = new Map<SubscriptionEvent, string>();
let messages = new Map<readonly SubscriptionEvent[], readonly string[]>();
let clearing = false;
const clearEncoded = (): void => {
  encoded = new Map();
  messages = new Map();
  clearing = false;
};
const clearSoon = (): void => {
  if (clearing) return;
  clearing = true;
  setImmediate(clearEncoded);
};

/** Events sent together are cut into messages of about this many characters. */
export const eventMessageChars = 64 * 1024;

/** The `act` of each `evt` event on the wire. */
const eventActs: Readonly<Record<SubscriptionEvent['kind'], string>> = { location: 'loc', entered: 'ent', exited: 'exi', deleted: 'del' };

function eventDat(event: SubscriptionEvent): unknown {
  switch (event.kind) {
    case 'location':
      return objectView(event.object, event.connectionStatus);
    case 'entered':
    case 'exited':
      return { object: event.object, area: event.area, time: event.time };
    case 'deleted':
      return 'object' in event ? { object: event.object } : { area: event.area };
  }
}

/** One event as an element of a message array. */
export function encodeEvent(event: SubscriptionEvent): string {
  let text = encoded.get(event);
  if (text === undefined) {
    // `rea` is the name the tenant knows: events carry the storage key (types.ts Realm.id).
    text = JSON.stringify({ typ: 'evt', act: eventActs[event.kind], rea: splitRealmKey(event.realm).name, dat: eventDat(event) });
    encoded.set(event, text);
    clearSoon();
  }
  return text;
}

/**
 * Events delivered together, as messages (arrays of events) of at most `maxChars`
 * characters each, unless one event alone is longer. Each message is joined at once, as
 * one flat string, rather than grown by concatenation.
 */
export function encodeEventMessages(events: readonly SubscriptionEvent[], maxChars = eventMessageChars): readonly string[] {
  const held = messages.get(events);
  if (held !== undefined) return held;
  const cut: string[] = [];
  let parts: string[] = [];
  // The characters of `parts` as a message: brackets and commas included.
  let chars = 1;
  for (const event of events) {
    const part = encodeEvent(event);
    if (parts.length > 0 && chars + 1 + part.length > maxChars) {
      cut.push(`[${parts.join(',')}]`);
      parts = [];
      chars = 1;
    }
    parts.push(part);
    chars += part.length + 1;
  }
  if (parts.length > 0) cut.push(`[${parts.join(',')}]`);
  messages.set(events, cut);
  clearSoon();
  return cut;
}
