/**
 * Hivekit subscription options (`sub` `cre`/`upd` `dat`, hivekit-compat.md 5.1, 5.2, 5.6):
 * parsing and the partial update rule. Pure.
 *
 * - `typ`: `obj`, `are`, `rea` (realm data), `sys` (realm events), `ins` (instructions) or
 *   `log` (instruction log events). `tsk` is refused with 501 (tasks are not implemented).
 * - Objects: `sty` `rea` (default) is the whole realm; `rec`/`cir`/`pol` need `sha`
 *   (domain/hivekit-shapes.ts); `tar` needs `sta: {id, r}` (a circle of r metres around the
 *   target object's current location). `atr`: attribute conditions (domain/attribute-conditions.ts).
 * - Areas, realm data, realm events, instructions and logs: `sty`, `sha`, `sta` and `atr` are
 *   ignored (compat 12.5).
 * - `exe: true` asks for the current set right away. Unknown keys are ignored (compat 3.7).
 */
import { parseAttributeConditions } from './attribute-conditions.js';
import { isV1ShapeType, parseV1Shape, type V1ShapeType } from './hivekit-shapes.js';
import { describe, isJsonObject, parseIdAt, quote } from './ids.js';
import { MAX_RADIUS_M } from './shape.js';
import type { FilterCondition, Shape } from './types.js';
import { invalid, LocusError } from '../errors.js';

export type SubscriptionKind = 'obj' | 'are' | 'rea' | 'sys' | 'ins' | 'log';

/** Where an object subscription looks. */
export type ObjectScope =
  | { sty: 'rea' }
  | { sty: V1ShapeType; shape: Shape }
  | { sty: 'tar'; target: string; radius: number };

export interface ObjectOptions {
  kind: 'obj';
  scope: ObjectScope;
  conditions: FilterCondition[];
}

export type SubscriptionOptions = ObjectOptions | { kind: 'are' } | { kind: 'rea' } | { kind: 'sys' } | { kind: 'ins' } | { kind: 'log' };

export interface OptionLimits {
  maxVertices: number;
  maxConditions: number;
}

const kinds = ['obj', 'are', 'rea', 'sys', 'ins', 'log'] as const;
const unsupported: Readonly<Record<string, string>> = { tsk: 'tasks' };
const scopes = `"rea", "rec", "cir", "pol" or "tar"`;

function datOf(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) throw invalid(`dat must be a JSON object of subscription options such as {"typ":"obj","sty":"rea"} (got ${describe(value)})`);
  return value;
}

function kindOf(dat: Record<string, unknown>): SubscriptionKind {
  const typ = dat.typ;
  if ((kinds as readonly unknown[]).includes(typ)) return typ as SubscriptionKind;
  if (typeof typ === 'string' && Object.hasOwn(unsupported, typ)) {
    throw new LocusError('not_implemented', `subscriptions of ${unsupported[typ]} (dat.typ ${quote(typ)}) are not supported by this server`);
  }
  throw invalid(`dat.typ must be "obj" (objects), "are" (areas), "rea" (realm data), "sys" (realm events), "ins" (instructions) or "log" (instruction logs) (got ${describe(typ)})`);
}

function parseTarget(value: unknown): { target: string; radius: number } {
  if (!isJsonObject(value)) throw invalid(`dat.sta must be the target {"id": <object id>, "r": <metres>} of a "tar" subscription (got ${describe(value)})`);
  const target = parseIdAt(value.id, 'dat.sta.id');
  const r = value.r;
  if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > MAX_RADIUS_M) {
    throw invalid(`dat.sta.r must be a radius in metres: a number greater than 0 and at most ${MAX_RADIUS_M} (got ${describe(r)})`);
  }
  return { target, radius: r };
}

/**
 * The scope that `dat` names, or undefined when it names none: `sty` `rea` (or no `sty`)
 * without `sha` — which on an update keeps the old scope (compat 5.6).
 */
function scopeOf(dat: Record<string, unknown>, limits: OptionLimits): ObjectScope | undefined {
  const sty = dat.sty ?? 'rea';
  if (sty === 'tar') return { sty: 'tar', ...parseTarget(dat.sta) };
  if (isV1ShapeType(sty)) {
    if (dat.sha === undefined || dat.sha === null) throw invalid(`dat.sty ${quote(sty)} needs the shape data in dat.sha`, 'invalid_shape');
    return { sty, shape: parseV1Shape(sty, dat.sha, limits.maxVertices, 'dat.sha') };
  }
  if (sty !== 'rea') throw invalid(`dat.sty must be ${scopes} (got ${describe(sty)})`);
  if (dat.sha !== undefined && dat.sha !== null) {
    throw invalid('dat.sha was given with dat.sty "rea" (the whole realm); name the shape kind in dat.sty ("rec", "cir" or "pol")', 'invalid_shape');
  }
  return undefined;
}

/** Parses the options of `sub` `cre`. Throws a LocusError (400; 501 for tsk) naming the bad key. */
export function parseSubscriptionOptions(value: unknown, limits: OptionLimits): SubscriptionOptions {
  const dat = datOf(value);
  const kind = kindOf(dat);
  if (kind !== 'obj') return { kind };
  return {
    kind,
    scope: scopeOf(dat, limits) ?? { sty: 'rea' },
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
      throw invalid(`dat.typ ${quote(kind)} differs from the subscription's kind ${quote(current.kind)}; delete it and create a new one`);
    }
  }
  if (current.kind !== 'obj') return current;
  const scope = scopeOf(dat, limits) ?? current.scope;
  const conditions = Object.hasOwn(dat, 'atr') ? parseAttributeConditions(dat.atr, limits.maxConditions) : current.conditions;
  return { kind: 'obj', scope, conditions };
}

/** `exe: true` (anything else, absent included, is false). */
export function wantsInitialPush(value: unknown): boolean {
  return isJsonObject(value) && value.exe === true;
}
