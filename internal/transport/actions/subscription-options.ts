/**
 * Hivekit subscription options (`sub` `cre`/`upd` `dat`, hivekit-compat.md 5.1, 5.2, 5.6):
 * parsing into what service/live keeps (domain/subscription.ts), the partial update rule, and
 * the two calls of service/live they feed (createSubscription, updateSubscription). The parsing
 * is pure.
 *
 * - `typ`: `obj`, `are`, `tsk` (tasks), `rea` (realm data), `sys` (realm events), `ins`
 *   (instructions) or `log` (instruction log events).
 * - Objects: `sty` `rea` (default) is the whole realm; `rec`/`cir`/`pol` need `sha`
 *   (domain/hivekit-shapes.ts); `tar` needs `sta: {id, r}` (a circle of r metres around the
 *   target object's current location). `atr`: attribute conditions (domain/attribute-conditions.ts).
 * - Areas, tasks, realm data, realm events, instructions and logs: `sty`, `sha`, `sta` and `atr`
 *   are ignored (compat 12.5).
 * - `exe: true` asks for the current set right away. Unknown keys are ignored (compat 3.7).
 */
import { parseAttributeConditions } from '../../domain/attribute-conditions.js';
import { isV1ShapeType, parseV1Shape } from '../../domain/hivekit-shapes.js';
import { describe, isJsonObject, parseIdAt, quote } from '../../domain/ids.js';
import { MAX_RADIUS_M } from '../../domain/shape.js';
import type { ObjectScope, OptionLimits, SubscriptionKind, SubscriptionOptions } from '../../domain/subscription.js';
import { invalid } from '../../errors.js';
import type { LiveSubscriptions, RealmRef } from '../../service/live/live-subscriptions.js';
import type { SubscriberConnection } from '../../service/live/push-port.js';

/** `dat.typ` as the wire spells it. */
type WireKind = 'obj' | 'are' | 'tsk' | 'rea' | 'sys' | 'ins' | 'log';


const kinds: Readonly<Record<WireKind, SubscriptionKind>> = {
  obj: 'objects',
  are: 'areas',
  tsk: 'tasks',
  rea: 'realmData',
  sys: 'realmEvents',
  ins: 'instructions',
  log: 'log',
};
const wireKinds: Readonly<Record<SubscriptionKind, WireKind>> = {
  objects: 'obj',
  areas: 'are',
  tasks: 'tsk',
  realmData: 'rea',
  realmEvents: 'sys',
  instructions: 'ins',
  log: 'log',
};
const scopes = `"rea", "rec", "cir", "pol" or "tar"`;

function datOf(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) throw invalid(`dat must be a JSON object of subscription options such as {"typ":"obj","sty":"rea"} (got ${describe(value)})`);
  return value;
}

function kindOf(dat: Record<string, unknown>): SubscriptionKind {
  const typ = dat.typ;
  if (typeof typ === 'string' && Object.hasOwn(kinds, typ)) return kinds[typ as WireKind];
  throw invalid(
    `dat.typ must be "obj" (objects), "are" (areas), "tsk" (tasks), "rea" (realm data), "sys" (realm events), "ins" (instructions) or "log" (instruction logs) (got ${describe(typ)})`,
  );
}

function parseTarget(value: unknown): { kind: 'target'; target: string; radius: number } {
  if (!isJsonObject(value)) throw invalid(`dat.sta must be the target {"id": <object id>, "r": <metres>} of a "tar" subscription (got ${describe(value)})`);
  const target = parseIdAt(value.id, 'dat.sta.id');
  const r = value.r;
  if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > MAX_RADIUS_M) {
    throw invalid(`dat.sta.r must be a radius in metres: a number greater than 0 and at most ${MAX_RADIUS_M} (got ${describe(r)})`);
  }
  return { kind: 'target', target, radius: r };
}

/**
 * The scope that `dat` names, or undefined when it names none: `sty` `rea` (or no `sty`)
 * without `sha` — which on an update keeps the old scope (compat 5.6).
 */
function scopeOf(dat: Record<string, unknown>, limits: OptionLimits): ObjectScope | undefined {
  const sty = dat.sty ?? 'rea';
  if (sty === 'tar') return parseTarget(dat.sta);
  if (isV1ShapeType(sty)) {
    if (dat.sha === undefined || dat.sha === null) throw invalid(`dat.sty ${quote(sty)} needs the shape data in dat.sha`, 'invalid_shape');
    return { kind: 'shape', shape: parseV1Shape(sty, dat.sha, limits.maxVertices, 'dat.sha') };
  }
  if (sty !== 'rea') throw invalid(`dat.sty must be ${scopes} (got ${describe(sty)})`);
  if (dat.sha !== undefined && dat.sha !== null) {
    throw invalid('dat.sha was given with dat.sty "rea" (the whole realm); name the shape kind in dat.sty ("rec", "cir" or "pol")', 'invalid_shape');
  }
  return undefined;
}

/** Parses the options of `sub` `cre`. Throws a LocusError (400) naming the bad key. */
export function parseSubscriptionOptions(value: unknown, limits: OptionLimits): SubscriptionOptions {
  const dat = datOf(value);
  const kind = kindOf(dat);
  if (kind !== 'objects') return { kind };
  return {
    kind,
    scope: scopeOf(dat, limits) ?? { kind: 'realm' },
    conditions: parseAttributeConditions(dat.atr, limits.maxConditions),
  };
}

/**
 * Applies the options of `sub` `upd` to the current ones (compat 5.6): fields present
 * replace (`sha` with its `sty`, `sta` with `sty:"tar"`, `atr`; `atr:[]` or null clears),
 * fields absent keep; `sty:"rea"` without `sha` keeps the old scope. `dat.typ`, when
 * given, must name the subscription's kind. The other kinds have no options to change. Throws like parseSubscriptionOptions; the current options are not touched.
 */
export function updateSubscriptionOptions(current: SubscriptionOptions, value: unknown, limits: OptionLimits): SubscriptionOptions {
  const dat = datOf(value);
  if (dat.typ !== undefined) {
    const kind = kindOf(dat);
    if (kind !== current.kind) {
      throw invalid(`dat.typ ${quote(wireKinds[kind])} differs from the subscription's kind ${quote(wireKinds[current.kind])}; delete it and create a new one`);
    }
  }
  if (current.kind !== 'objects') return current;
  const scope = scopeOf(dat, limits) ?? current.scope;
  const conditions = Object.hasOwn(dat, 'atr') ? parseAttributeConditions(dat.atr, limits.maxConditions) : current.conditions;
  return { kind: 'objects', scope, conditions };
}

/** `exe: true` (anything else, absent included, is false). */
export function wantsInitialPush(value: unknown): boolean {
  return isJsonObject(value) && value.exe === true;
}

/** `sub` `cre` with the v1 `dat`: parsed (nothing is created when it is bad), then created. */
export async function createSubscription(live: LiveSubscriptions, connection: SubscriberConnection, id: string, realm: RealmRef | null, dat: unknown): Promise<void> {
  await live.create(connection, id, realm, parseSubscriptionOptions(dat, live.optionLimits), wantsInitialPush(dat));
}

/** `sub` `upd` with the v1 `dat`: the partial rule applied to the subscription's options (404 first when there is none). */
export async function updateSubscription(live: LiveSubscriptions, connection: SubscriberConnection, id: string, dat: unknown): Promise<void> {
  await live.update(connection, id, (current) => updateSubscriptionOptions(current, dat, live.optionLimits));
}
