/**
 * Who is calling, once authenticated: the same for every transport and token kind
 * (opaque realm tokens, LOCUS_ADMIN_TOKEN, tenant JWTs). Services and handlers decide on
 * these fields only, never on how the caller signed in.
 */
import type { Scope } from '../domain/types.js';

/** The tenant of opaque tokens, LOCUS_ADMIN_TOKEN and LOCUS_JWT_SECRET (decisions.md, "Tenants"). */
export const defaultTenant = 'default';

/** A Hivekit right letter (`per` claim): create, read (also list, search, subscribe), update, delete. */
export type Right = 'C' | 'R' | 'U' | 'D';

/**
 * A JWT's `per` claim, parsed: realm id (or `*`) → id glob (or `*`) → the letters granted.
 * Absent (null on the principal): full rights within the principal's reach.
 */
export type Rights = ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<Right>>>;

/** A JWT's `dpv` claim: realm id → object-id globs this connection is the data provider of (presence). */
export type DataProviderClaims = Readonly<Record<string, readonly string[]>>;

export interface Principal {
  /** Rate-limit key and log field: the opaque token's id, `admin`, or `jwt:<kid>:<sub>`. */
  tokenId: string;
  kind: 'token' | 'admin' | 'jwt';
  /** The tenant whose realms the principal may reach. */
  tenant: string;
  /** The one realm the principal is confined to (opaque token, realm-bound key); null: any realm of the tenant. */
  realm: string | null;
  /**
   * Opaque tokens: their scope. JWTs and LOCUS_ADMIN_TOKEN: `admin` (a `sub`-only JWT has
   * every right in its tenant, realm management included), narrowed by `rights`.
   */
  scope: Scope;
  /** The JWT's `per` claim; null or absent: no narrowing. */
  rights?: Rights | null;
  /** The JWT's `dpv` claim; null or absent: none. */
  dataProvider?: DataProviderClaims | null;
  /** The JWT's `sub`, for logs. */
  subject?: string;
  /** When the credentials stop being valid (JWT `exp`, ms since the epoch); absent: never. */
  expiresAt?: number;
}
