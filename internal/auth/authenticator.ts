/**
 * Bearer token authentication and realm/scope authorization, shared by every
 * transport. Order of checks: 401 (no or unknown token), then 403 (other realm or
 * scope too small), then the caller's 404, so a token never learns whether another
 * realm exists.
 *
 * A secret is LOCUS_ADMIN_TOKEN, an opaque realm token (only its SHA-256 is stored), or a
 * tenant JWT (three base64url segments; auth/jwt.ts). Verified JWTs are held in memory,
 * keyed by the SHA-256 of the token, until their `exp` (WebSocket and TCP sessions check
 * their token at every message, by its hash: principalOf): a held JWT is still refused once
 * it expires or its key is revoked (the key is looked up at every use; auth/held-lookups.ts
 * holds keys and tokens in memory and drops them when a control message says so).
 *
 * A session's check at every message is heldPrincipal first: the same answer from what is
 * held in memory, without a promise, and the asynchronous path only when the store (or a
 * verification) must be asked. Revocation reaches both alike: through the held lookups.
 */
import { LocusError } from '../errors.js';
import type { Scope } from '../domain/types.js';
import { splitRealmKey } from '../domain/realm-key.js';
import type { SigningKeyRecord, TokenRecord } from '../domain/types.js';
import type { SigningKeyStore, TokenStore } from '../store/port.js';
import { JWT_LEEWAY_S, jwtFailure, jwtTexts, looksLikeJwt, verifyJwt } from './jwt.js';
import { defaultTenant, type Principal } from './principal.js';
import { hashSecret } from './tokens.js';

export type { Principal } from './principal.js';

const scopeRank: Record<Scope, number> = { read: 0, write: 1, admin: 2 };

/** Verified JWTs held at most; past this the oldest half is dropped. */
const HELD_JWTS = 20_000;

export function unauthorized(message: string): LocusError {
  return new LocusError('unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

/** Extracts the secret from `Bearer <token>`; null when the header is absent or not Bearer. */
export function bearerSecret(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1] ?? null;
}

export interface JwtSettings {
  /** The tenants' signing keys; absent: only LOCUS_JWT_SECRET. */
  signingKeys?: SigningKeyLookup;
  /** LOCUS_JWT_SECRET, the default tenant's key for tokens without `kid`; null: none. */
  jwtSecret?: string | null;
  /** Milliseconds since the epoch (tests pass a fake clock). */
  clock?: () => number;
}

/** Tokens by hash; `held` (auth/held-lookups.ts): the record in memory now, if any. */
export type TokenLookup = Pick<TokenStore, 'findByHash'> & { held?: (hash: string) => Readonly<TokenRecord> | undefined };

/** Signing keys by id; `held` as for TokenLookup. */
export type SigningKeyLookup = Pick<SigningKeyStore, 'get'> & { held?: (id: string) => Readonly<SigningKeyRecord> | undefined };

interface HeldJwt {
  principal: Principal;
  kid: string | null;
}

export class Authenticator {
  private readonly adminHash: string | null;
  private readonly signingKeys: SigningKeyLookup | null;
  private readonly jwtSecret: string | null;
  private readonly clock: () => number;
  private readonly jwts = new Map<string, HeldJwt>();

  constructor(
    private readonly tokens: TokenLookup,
    adminToken: string | null,
    jwt: JwtSettings = {},
  ) {
    this.adminHash = adminToken === null ? null : hashSecret(adminToken);
    this.signingKeys = jwt.signingKeys ?? null;
    this.jwtSecret = jwt.jwtSecret ?? null;
    this.clock = jwt.clock ?? Date.now;
  }

  /**
   * Resolves a secret (opaque token, admin token or JWT) to its principal; 401 when it is not
   * valid. `hash`: the secret's hashSecret, when the caller holds it already.
   */
  async authenticate(secret: string | null, hash: string | null = null): Promise<Principal> {
    if (secret === null) throw unauthorized('a Bearer token is required');
    hash ??= hashSecret(secret);
    if (hash !== this.adminHash && looksLikeJwt(secret)) {
      const held = await this.heldJwt(hash);
      if (held !== null) return held;
      const { principal, kid } = await verifyJwt(
        secret,
        { key: async (id) => (this.signingKeys === null ? null : this.signingKeys.get(id)), defaultSecret: this.jwtSecret },
        this.clock(),
      );
      if (this.jwts.size >= HELD_JWTS) this.dropOldest();
      this.jwts.set(hash, { principal, kid });
      return { ...principal };
    }
    return this.principalOf(hash);
  }

  /**
   * Resolves a secret's hash (hashSecret) to its principal; 401 when it is unknown. A
   * connection that checks its token at every message keeps the hash, not the secret,
   * and skips hashing it again. A JWT is found by its hash once authenticate has verified it.
   */
  async principalOf(hash: string): Promise<Principal> {
    if (this.adminHash !== null && hash === this.adminHash) return { tokenId: 'admin', kind: 'admin', tenant: defaultTenant, realm: null, scope: 'admin' };
    const jwt = await this.heldJwt(hash);
    if (jwt !== null) return jwt;
    const record = await this.tokens.findByHash(hash);
    if (record === null) throw unauthorized('the token is not valid');
    const { tenant, name } = splitRealmKey(record.realm);
    return { tokenId: record.id, kind: 'token', tenant, realm: name, scope: record.scope };
  }

  /**
   * The principal authenticate would give for a secret of this hash, when memory alone
   * decides it now: the admin token, a held JWT unexpired whose key is held, an opaque token
   * the held lookup holds. Undefined otherwise (then authenticate, which asks the store,
   * verifies, or refuses).
   */
  heldPrincipal(hash: string): Principal | undefined {
    if (this.adminHash !== null && hash === this.adminHash) return { tokenId: 'admin', kind: 'admin', tenant: defaultTenant, realm: null, scope: 'admin' };
    const jwt = this.jwts.get(hash);
    if (jwt !== undefined) {
      const expiresAt = jwt.principal.expiresAt;
      if (expiresAt !== undefined && this.clock() >= expiresAt + JWT_LEEWAY_S * 1000) return undefined;
      if (jwt.kid !== null && this.signingKeys?.held?.(jwt.kid) === undefined) return undefined;
      return { ...jwt.principal };
    }
    const record = this.tokens.held?.(hash);
    if (record === undefined) return undefined;
    const { tenant, name } = splitRealmKey(record.realm);
    return { tokenId: record.id, kind: 'token', tenant, realm: name, scope: record.scope };
  }

  /** A held JWT's principal, checked again for expiry and its key; null when none is held. */
  private async heldJwt(hash: string): Promise<Principal | null> {
    const held = this.jwts.get(hash);
    if (held === undefined) return null;
    const expiresAt = held.principal.expiresAt;
    if (expiresAt !== undefined && this.clock() >= expiresAt + JWT_LEEWAY_S * 1000) {
      this.jwts.delete(hash);
      throw jwtFailure(jwtTexts.expired);
    }
    if (held.kid !== null && (this.signingKeys === null || (await this.signingKeys.get(held.kid)) === null)) {
      this.jwts.delete(hash);
      throw jwtFailure(jwtTexts.unknownKey);
    }
    return { ...held.principal };
  }

  private dropOldest(): void {
    let n = 0;
    for (const key of this.jwts.keys()) {
      if (n++ >= HELD_JWTS / 2) break;
      this.jwts.delete(key);
    }
  }

  /** 403 unless the principal may act on `realm` with at least scope `needed` (opaque tokens; the admin API). */
  authorize(principal: Principal, realm: string | null, needed: Scope): void {
    if (principal.scope !== 'admin' && realm !== null && principal.realm !== realm) {
      throw new LocusError('forbidden', 'the token does not belong to this realm');
    }
    if (scopeRank[principal.scope] < scopeRank[needed]) {
      throw new LocusError('forbidden', `this operation needs a token with scope ${needed}`);
    }
  }
}
