/**
 * A realm's storage key (types.ts Realm.id) from its tenant and its name (the id the tenant
 * knows and the wire shows). Pure.
 *
 * - The default tenant's realms: the key is the name, so data stored before tenants existed
 *   keeps its keys, and the realms of opaque tokens and LOCUS_ADMIN_TOKEN are unchanged.
 * - Any other tenant: `<tenant>` U+001F `<name>` (U+001F, the ASCII unit separator).
 *
 * Why it cannot collide: realm names never hold control characters (ids.ts checkName), so no
 * default-tenant key holds U+001F; tenant ids are `[a-z0-9-]` (tenant.ts), so a key holds
 * exactly one U+001F and the part before it is the tenant: two (tenant, name) pairs give the
 * same key only when both are equal.
 *
 * Where a key ends up: SQLite `realm` columns (text, any character), the search index (keyed
 * by the integer of `realm_keys`, never by the text), NATS subject tokens (events/port.ts
 * realmToken percent-encodes everything but `[A-Za-z0-9_-]`, so U+001F becomes `%1F`) and
 * logs (JSON-escaped as `\u001f`; log `realmLabel(key)` where people read it). It never
 * reaches the wire: replies show Realm.name.
 */
import { defaultTenant } from '../auth/principal.js';

/** The separator of a non-default tenant's key. */
export const REALM_KEY_SEPARATOR = '\u001f';

/** The storage key of realm `name` of `tenant`. */
export function realmKey(tenant: string, name: string): string {
  return tenant === defaultTenant ? name : `${tenant}${REALM_KEY_SEPARATOR}${name}`;
}

/** The tenant and name a storage key was made of (the inverse of realmKey). */
export function splitRealmKey(key: string): { tenant: string; name: string } {
  const at = key.indexOf(REALM_KEY_SEPARATOR);
  if (at < 0) return { tenant: defaultTenant, name: key };
  return { tenant: key.slice(0, at), name: key.slice(at + 1) };
}

/** A key for people (logs, CLI): `name` for the default tenant, `tenant/name` otherwise. */
export function realmLabel(key: string): string {
  const { tenant, name } = splitRealmKey(key);
  return tenant === defaultTenant ? name : `${tenant}/${name}`;
}
