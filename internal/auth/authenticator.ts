/**
 * Bearer token authentication and realm/scope authorization, shared by every
 * transport. Order of checks: 401 (no or unknown token), then 403 (other realm or
 * scope too small), then the caller's 404, so a token never learns whether another
 * realm exists.
 */
import { LocusError } from '../errors.js';
import type { Scope } from '../domain/types.js';
import type { TokenStore } from '../store/port.js';
import { defaultTenant, type Principal } from './principal.js';
import { hashSecret } from './tokens.js';

export type { Principal } from './principal.js';

const scopeRank: Record<Scope, number> = { read: 0, write: 1, admin: 2 };

export function unauthorized(message: string): LocusError {
  return new LocusError('unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

/** Extracts the secret from `Bearer <token>`; null when the header is absent or not Bearer. */
export function bearerSecret(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1] ?? null;
}

export class Authenticator {
  private readonly adminHash: string | null;

  constructor(
    private readonly tokens: TokenStore,
    adminToken: string | null,
  ) {
    this.adminHash = adminToken === null ? null : hashSecret(adminToken);
  }

  /** Resolves a secret to its principal; 401 when it is unknown. */
  async authenticate(secret: string | null): Promise<Principal> {
    if (secret === null) throw unauthorized('a Bearer token is required');
    return this.principalOf(hashSecret(secret));
  }

  /**
   * Resolves a secret's hash (hashSecret) to its principal; 401 when it is unknown. A
   * connection that checks its token at every message keeps the hash, not the secret,
   * and skips hashing it again.
   */
  async principalOf(hash: string): Promise<Principal> {
    if (this.adminHash !== null && hash === this.adminHash) return { tokenId: 'admin', kind: 'admin', tenant: defaultTenant, realm: null, scope: 'admin' };
    const record = await this.tokens.findByHash(hash);
    if (record === null) throw unauthorized('the token is not valid');
    return { tokenId: record.id, kind: 'token', tenant: defaultTenant, realm: record.realm, scope: record.scope };
  }

  /** 403 unless the principal may act on `realm` with at least scope `needed`. */
  authorize(principal: Principal, realm: string | null, needed: Scope): void {
    if (principal.scope !== 'admin' && realm !== null && principal.realm !== realm) {
      throw new LocusError('forbidden', 'the token does not belong to this realm');
    }
    if (scopeRank[principal.scope] < scopeRank[needed]) {
      throw new LocusError('forbidden', `this operation needs a token with scope ${needed}`);
    }
  }
}
