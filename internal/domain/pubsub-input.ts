/**
 * The payload of realm pub/sub messages (hivekit-compat.md 4.8): `sub` and `uns` carry
 * `dat:{eve, idp?}`, `pub` carries `dat:{eve, idp?, dat}`. Other keys of `dat` are ignored
 * (compat 3.7). Pure: no I/O.
 */
import { invalid, tooLarge } from '../errors.js';
import { checkName, describe, isJsonObject, utf8Length } from './ids.js';

/** The id pattern of a subscription, and the id of a publication, when the message gives none. */
export const anyId = '*';

/** Largest payload of one publication, as JSON text in UTF-8 bytes (it is copied to every matching subscriber). */
export const MAX_PUBLISH_BYTES = 64 * 1024;

export interface PubSubTopic {
  /** The event name (1–256 UTF-8 bytes, no control characters). */
  eve: string;
  /** Subscriptions: the id glob (`*` any run of characters). Publications: the literal id. */
  idp: string;
}

export interface Publication extends PubSubTopic {
  /** The payload as given (absent: undefined, delivered without `dat`). */
  dat: unknown;
}

function datOf(raw: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const dat = raw.dat;
  if (!isJsonObject(dat)) throw invalid(`dat must be a JSON object holding eve (got ${describe(dat)})`);
  return dat;
}

function topicOf(dat: Record<string, unknown>): PubSubTopic {
  const { eve, idp } = dat;
  if (typeof eve !== 'string') throw invalid(`dat.eve must be the event name, a string (got ${describe(eve)})`);
  checkName(eve, 'dat.eve', 'invalid_request');
  if (idp === undefined || idp === null) return { eve, idp: anyId };
  if (typeof idp !== 'string') throw invalid(`dat.idp must be a string (got ${describe(idp)})`, 'invalid_id');
  checkName(idp, 'dat.idp', 'invalid_id');
  return { eve, idp };
}

/** `sub` and `uns`: the event and the id pattern (default `*`). */
export function parseSubscribe(raw: Readonly<Record<string, unknown>>): PubSubTopic {
  return topicOf(datOf(raw));
}

/** `pub`: the event, the id it is published under (default `*`, literal) and the payload (at most MAX_PUBLISH_BYTES as JSON). */
export function parsePublish(raw: Readonly<Record<string, unknown>>): Publication {
  const dat = datOf(raw);
  const topic = topicOf(dat);
  const payload = dat.dat;
  if (payload !== undefined) {
    const text = JSON.stringify(payload);
    // Every UTF-16 code unit is at most 3 UTF-8 bytes: a short text passes without counting.
    if (text.length * 3 > MAX_PUBLISH_BYTES && utf8Length(text) > MAX_PUBLISH_BYTES) {
      throw tooLarge(`dat.dat is too large: at most ${MAX_PUBLISH_BYTES} bytes of JSON may be published at once`);
    }
  }
  return { ...topic, dat: payload };
}
