/**
 * The v1 action protocol on the wire, for every transport: a message is a JSON array of
 * actions; a reply is a JSON array with one result per action. This module only turns
 * text into actions and results into text; it knows nothing of sockets or services.
 */
import type { BuildInfo } from '../../build-info.js';
import { quote } from '../../domain/ids.js';
import { isJsonObject } from '../../domain/ids.js';
import { invalid, LocusError, tooLarge, type ErrorCode } from '../../errors.js';
import type { LocusEvent } from '../../events/port.js';

/** A client-chosen correlation id, echoed in the action's result. */
export type Rid = string | number;

export interface Action {
  typ: string;
  act: string;
  /** The realm named by the action; absent: the token's realm. */
  rea?: string;
  rid?: Rid;
  /** The payload; `{}` when the action gave none. */
  dat: Record<string, unknown>;
}

/** One element of a message: an action, or why it is not one (answered with `res: "err"`). */
export type ParsedAction = { ok: true; action: Action } | { ok: false; typ: string | null; act: string | null; rid?: Rid; error: LocusError };

export type ParsedMessage = { ok: true; actions: ParsedAction[] } | { ok: false; error: LocusError };

export interface ActionResult {
  typ: string | null;
  act: string | null;
  res: 'suc' | 'err';
  dat: unknown;
  rid?: Rid;
  /** Cursor of the next page, when a list page is not the last. */
  nxt?: string;
}

const actionKeys = new Set(['typ', 'act', 'rea', 'rid', 'dat']);

const errorDat = (err: LocusError): { code: ErrorCode; message: string } => ({ code: err.code, message: err.message });

function parseAction(value: unknown, index: number): ParsedAction {
  const where = `action ${index}`;
  if (!isJsonObject(value)) {
    return { ok: false, typ: null, act: null, error: invalid(`${where} must be a JSON object with typ, act and dat`) };
  }
  const typ = typeof value.typ === 'string' ? value.typ : null;
  const act = typeof value.act === 'string' ? value.act : null;
  const rid = value.rid;
  const validRid = typeof rid === 'string' || (typeof rid === 'number' && Number.isFinite(rid));
  const fail = (message: string): ParsedAction => ({
    ok: false,
    typ,
    act,
    ...(validRid ? { rid } : {}),
    error: invalid(`${where}: ${message}`),
  });
  for (const key of Object.keys(value)) {
    if (!actionKeys.has(key)) return fail(`unknown key ${quote(key)}; an action has typ, act, rea, rid and dat`);
  }
  if (typ === null) return fail('typ must be a string such as "obj"');
  if (act === null) return fail('act must be a string such as "get"');
  if (rid !== undefined && !validRid) return fail('rid must be a string or a number');
  const { rea, dat } = value;
  if (rea !== undefined && typeof rea !== 'string') return fail('rea must be a realm id (a string)');
  if (dat !== undefined && !isJsonObject(dat)) return fail('dat must be a JSON object');
  const action: Action = { typ, act, dat: dat ?? {} };
  if (rea !== undefined) action.rea = rea;
  if (validRid) action.rid = rid;
  return { ok: true, action };
}

/** The default of LOCUS_MAX_ACTIONS: actions in one message. */
export const defaultMaxActions = 10_000;

/**
 * Reads an already parsed JSON value as a message (`/v1/http` bodies arrive parsed). A
 * message of more than `maxActions` actions is refused whole, before any is read.
 */
export function parseActions(value: unknown, maxActions = defaultMaxActions): ParsedMessage {
  if (!Array.isArray(value)) {
    return { ok: false, error: invalid('a message must be a JSON array of actions') };
  }
  if (value.length > maxActions) {
    return {
      ok: false,
      error: tooLarge(`a message has ${value.length} actions; at most ${maxActions} are allowed (send several messages, or obj/blk)`),
    };
  }
  return { ok: true, actions: value.map((item, index) => parseAction(item, index)) };
}

/** Reads one WebSocket message or TCP line. */
export function parseMessage(text: string, maxActions = defaultMaxActions): ParsedMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: invalid('the message is not valid JSON', 'invalid_json') };
  }
  return parseActions(value, maxActions);
}

export function successResult(action: Action, dat: unknown, nxt?: string | null): ActionResult {
  const result: ActionResult = { typ: action.typ, act: action.act, res: 'suc', dat };
  if (action.rid !== undefined) result.rid = action.rid;
  if (nxt !== undefined && nxt !== null) result.nxt = nxt;
  return result;
}

export function errorResult(typ: string | null, act: string | null, rid: Rid | undefined, err: LocusError): ActionResult {
  const result: ActionResult = { typ, act, res: 'err', dat: errorDat(err) };
  if (rid !== undefined) result.rid = rid;
  return result;
}

export function encodeResults(results: readonly ActionResult[]): string {
  return JSON.stringify(results);
}

/** An error that belongs to no action: not JSON, not an array, too large, token revoked. */
export function encodeMessageError(err: LocusError): string {
  return JSON.stringify([{ typ: 'sys', act: 'err', res: 'err', dat: errorDat(err) }]);
}

export function encodeAuthSuccess(build: BuildInfo): string {
  return JSON.stringify([{ typ: 'sys', act: 'aut', res: 'suc', dat: { version: build.version, buildDate: build.buildDate } }]);
}

export function encodeAuthFailure(message: string): string {
  return JSON.stringify([{ typ: 'sys', act: 'aut', res: 'err', dat: errorDat(new LocusError('unauthorized', message)) }]);
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
let encoded = new Map<LocusEvent, string>();
let messages = new Map<readonly LocusEvent[], readonly string[]>();
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

function eventDat(event: LocusEvent): unknown {
  switch (event.kind) {
    case 'loc':
      return event.object;
    case 'ent':
    case 'exi':
      return { object: event.object, area: event.area, time: event.time };
    case 'del':
      return 'object' in event ? { object: event.object } : { area: event.area };
    default:
      return null;
  }
}

/** One event as an element of a message array. */
export function encodeEvent(event: LocusEvent): string {
  let text = encoded.get(event);
  if (text === undefined) {
    text = JSON.stringify({ typ: 'evt', act: event.kind, rea: event.realm, dat: eventDat(event) });
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
export function encodeEventMessages(events: readonly LocusEvent[], maxChars = eventMessageChars): readonly string[] {
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
