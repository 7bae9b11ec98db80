/**
 * JWT rights: the `per` and `dpv` claims (hivekit-rest.md D7, hivekit-compat.md §2, §6) and
 * the checks every handler uses. Pure.
 *
 * `per`: `{ "<realm name>|*": { "<id glob>": "<letters>" } }`, letters among C (create),
 * R (read, list, search, subscribe), U (update), D (delete); `*` as the realm key covers every
 * realm of the tenant; globs as domain/id-glob.ts. Absent: full rights (a `sub`-only token
 * may do everything in its tenant, realm management included).
 *
 * Opaque tokens have no `per`: their scope decides (R needs `read`, C/U/D `write`).
 */
import { anyGlobMatches, compileGlob, globMatches } from '../domain/id-glob.js';
import { LocusError } from '../errors.js';
import type { DataProviderClaims, Principal, Right, Rights } from './principal.js';

const LETTERS: ReadonlySet<string> = new Set(['C', 'R', 'U', 'D']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `per` claim, parsed; undefined → null (no narrowing); a bad shape → null plus `invalid`. */
export function parsePer(claim: unknown): { rights: Rights | null } | { invalid: string } {
  if (claim === undefined || claim === null) return { rights: null };
  if (!isPlainObject(claim)) return { invalid: 'per must be an object of realm → { id pattern → letters }' };
  const rights = new Map<string, Map<string, Set<Right>>>();
  for (const [realm, globs] of Object.entries(claim)) {
    if (!isPlainObject(globs)) return { invalid: `per.${realm} must be an object of id pattern → letters` };
    const byGlob = new Map<string, Set<Right>>();
    for (const [glob, letters] of Object.entries(globs)) {
      if (typeof letters !== 'string') return { invalid: `per.${realm}["${glob}"] must be a string of the letters C, R, U, D` };
      const set = new Set<Right>();
      for (const letter of letters) {
        if (!LETTERS.has(letter)) return { invalid: `per.${realm}["${glob}"] must be a string of the letters C, R, U, D` };
        set.add(letter as Right);
      }
      byGlob.set(glob, set);
    }
    rights.set(realm, byGlob);
  }
  return { rights };
}

/** The `dpv` claim, parsed: realm (or `*`) → array of id globs. */
export function parseDpv(claim: unknown): { dataProvider: DataProviderClaims | null } | { invalid: string } {
  if (claim === undefined || claim === null) return { dataProvider: null };
  if (!isPlainObject(claim)) return { invalid: 'dpv must be an object of realm → [id patterns]' };
  const out: Record<string, readonly string[]> = {};
  for (const [realm, globs] of Object.entries(claim)) {
    if (!Array.isArray(globs) || !globs.every((g) => typeof g === 'string')) return { invalid: `dpv.${realm} must be an array of id patterns` };
    out[realm] = [...(globs)];
  }
  return { dataProvider: out };
}

/** The `per` entries that apply to a realm: its own and those of `*`. */
function entriesFor(rights: Rights, realmName: string): ReadonlyMap<string, ReadonlySet<Right>>[] {
  const out: ReadonlyMap<string, ReadonlySet<Right>>[] = [];
  const own = rights.get(realmName);
  if (own !== undefined) out.push(own);
  const any = realmName === '*' ? undefined : rights.get('*');
  if (any !== undefined) out.push(any);
  return out;
}

/** An opaque token's scope against a right: R needs read, C/U/D write. */
function scopeAllows(principal: Principal, right: Right): boolean {
  return right === 'R' || principal.scope !== 'read';
}

/** True when the principal's realm confinement lets it reach `realmName` (opaque admin-scope tokens reach every realm of their tenant). */
export function reachesRealm(principal: Principal, realmName: string): boolean {
  if (principal.realm === null || principal.realm === realmName) return true;
  return principal.kind === 'token' && principal.scope === 'admin';
}

/**
 * Realm-level check (the dispatcher's, REST's realm gate): may the principal use `right` on
 * some entity of the realm? A JWT with `per` needs at least one pattern of the realm (or of
 * `*`) granting the letter; handlers then check each id with allowedOn.
 */
export function realmAllows(principal: Principal, realmName: string, right: Right): boolean {
  if (!reachesRealm(principal, realmName)) return false;
  if (principal.kind !== 'jwt') return scopeAllows(principal, right);
  const rights = principal.rights ?? null;
  if (rights === null) return true;
  return entriesFor(rights, realmName).some((byGlob) => [...byGlob.values()].some((letters) => letters.has(right)));
}

/**
 * Id-level check for handlers: may the principal use `right` on entity `entityId` of realm
 * `realmName`? Opaque tokens and JWTs without `per`: the realm-level answer.
 */
export function allowedOn(principal: Principal, realmName: string, right: Right, entityId: string): boolean {
  if (!reachesRealm(principal, realmName)) return false;
  if (principal.kind !== 'jwt') return scopeAllows(principal, right);
  const rights = principal.rights ?? null;
  if (rights === null) return true;
  for (const byGlob of entriesFor(rights, realmName)) {
    for (const [glob, letters] of byGlob) if (letters.has(right) && globMatches(glob, entityId)) return true;
  }
  return false;
}

/** A test of entity ids: true when the principal may use the right on that id. */
export type IdFilter = (entityId: string) => boolean;

const NOTHING: IdFilter = () => false;

/**
 * allowedOn for many ids of one realm, prepared once: null when every id is allowed (an
 * opaque token within its scope, a JWT without `per`, or a `per` granting the letter on a
 * pattern of only `*`s), so that callers do no per-entity work in the common case; else a
 * test with the realm's patterns for the letter compiled once (never true for any id when
 * none grants it). `filterIds(…)(id)` equals `allowedOn(…, id)` for every id.
 */
export function idFilter(principal: Principal, realmName: string, right: Right): IdFilter | null {
  if (!reachesRealm(principal, realmName)) return NOTHING;
  if (principal.kind !== 'jwt') return scopeAllows(principal, right) ? null : NOTHING;
  const rights = principal.rights ?? null;
  if (rights === null) return null;
  const patterns: string[] = [];
  for (const byGlob of entriesFor(rights, realmName)) {
    for (const [glob, letters] of byGlob) if (letters.has(right)) patterns.push(glob);
  }
  if (patterns.some((glob) => /^\*+$/.test(glob))) return null;
  if (patterns.length === 0) return NOTHING;
  const globs = [...new Set(patterns)].map(compileGlob);
  const [only] = globs;
  if (globs.length === 1 && only !== undefined) return (entityId) => only.matches(entityId);
  return (entityId) => globs.some((glob) => glob.matches(entityId));
}

/** The read filter of results (lists, search, subscription pushes, pub/sub deliveries): idFilter with R. */
export function readFilter(principal: Principal, realmName: string): IdFilter | null {
  return idFilter(principal, realmName, 'R');
}

/** The entries whose id passes the filter (all of them, as given, when it is null). */
export function keepAllowed<T extends { id: string }>(entries: T[], filter: IdFilter | null): T[] {
  return filter === null ? entries : entries.filter((entry) => filter(entry.id));
}

/** The 403 of an id outside the grant (the same text on REST and v1). */
export function idForbidden(right: Right, entityId: string): LocusError {
  return new LocusError('forbidden', `the token's permissions (per) do not grant ${right} on ${entityId.slice(0, 256)}`);
}

/** Throws idForbidden unless allowedOn. */
export function checkAllowedOn(principal: Principal, realmName: string, right: Right, entityId: string): void {
  if (!allowedOn(principal, realmName, right, entityId)) throw idForbidden(right, entityId);
}

/**
 * Realm management (create, update, delete a realm; C, U, D): LOCUS_ADMIN_TOKEN and opaque
 * admin-scope tokens (their tenant: default); a JWT without `per` (within its realm when its
 * key is realm-bound); a JWT whose `per` grants the letter on pattern `*` of the realm (or of
 * realm key `*`). Reading and listing realms is `realmAllows(…, 'R')`.
 */
export function mayManageRealm(principal: Principal, realmName: string, right: Right): boolean {
  if (principal.kind === 'admin') return true;
  if (principal.kind === 'token') return principal.scope === 'admin';
  if (principal.realm !== null && principal.realm !== realmName) return false;
  const rights = principal.rights ?? null;
  if (rights === null) return true;
  return entriesFor(rights, realmName).some((byGlob) => byGlob.get('*')?.has(right) === true);
}

/** True when the principal's `dpv` claim makes it the data provider of object `objectId` in the realm. */
export function providesData(principal: Principal, realmName: string, objectId: string): boolean {
  const claims = principal.dataProvider ?? null;
  if (claims === null) return false;
  const own = claims[realmName] ?? [];
  const any = claims['*'] ?? [];
  return anyGlobMatches(own, objectId) || anyGlobMatches(any, objectId);
}
