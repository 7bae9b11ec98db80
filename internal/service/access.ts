/**
 * The gate every realm-scoped request passes, whatever its transport:
 * authenticate (401), authorize realm and scope (403), rate limit (429), then
 * resolve the realm (404).
 */
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import type { Realm, Scope } from '../domain/types.js';
import { LocusError, unknownRealm } from '../errors.js';
import type { Clock } from './clock.js';
import type { RealmService } from './realms.js';

export interface RateSettings {
  rateLimit: number;
  rateBurst: number;
  /** Failed authentications per second per source address, and how many at once. */
  authFailureRate: number;
  authFailureBurst: number;
}

export class Access {
  constructor(
    private readonly auth: Authenticator,
    private readonly realms: RealmService,
    private readonly limiter: RateLimiter,
    private readonly rates: RateSettings,
    private readonly clock: Clock,
  ) {}

  /**
   * The principal of a secret. With the source address of the request, a failed
   * authentication counts against that address (before a token is known there is no
   * other key), and an address over its limit is refused before its secret is checked,
   * so that guessing tokens is slow.
   */
  authenticate(secret: string | null, source: string | null = null): Promise<Principal> {
    return this.guarded(source, () => this.auth.authenticate(secret));
  }

  /** The principal of a secret's hash (see Authenticator.principalOf; `source` as for authenticate). */
  principalOf(hash: string, source: string | null = null): Promise<Principal> {
    if (source === null) return this.auth.principalOf(hash);
    return this.guarded(source, () => this.auth.principalOf(hash));
  }

  private async guarded(source: string | null, attempt: () => Promise<Principal>): Promise<Principal> {
    if (source === null) return attempt();
    const key = `address:${source}`;
    const now = this.clock();
    const decision = this.limiter.peek(key, now);
    if (!decision.allowed) throw rateLimited('too many failed authentications from this address', decision.retryAfterSeconds);
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof LocusError && err.code === 'unauthorized') {
        this.limiter.take(key, this.rates.authFailureRate, this.rates.authFailureBurst, now);
      }
      throw err;
    }
  }

  /** Checks an authenticated principal against a realm and returns the realm. */
  async enterRealm(principal: Principal, realmId: string, scope: Scope): Promise<Realm> {
    this.auth.authorize(principal, realmId, scope);
    const realm = await this.realms.find(realmId);
    this.throttle(principal, realm?.settings.rateLimit ?? null);
    if (realm === null) throw unknownRealm(realmId);
    return realm;
  }

  /**
   * Counts an action that enters no realm (`sys` actions, unknown or invalid ones) against
   * the caller's rate limit, at its realm's rate when it has one: every action counts.
   */
  async countAction(principal: Principal): Promise<void> {
    const realm = principal.realm === null ? null : await this.realms.find(principal.realm);
    this.throttle(principal, realm?.settings.rateLimit ?? null);
  }

  /** For realm management: needs an admin-scoped token. */
  enterAdmin(principal: Principal): void {
    this.auth.authorize(principal, null, 'admin');
    this.throttle(principal, null);
  }

  private throttle(principal: Principal, realmRate: number | null): void {
    const rate = realmRate ?? this.rates.rateLimit;
    const burst = Math.max(this.rates.rateBurst, rate);
    const decision = this.limiter.take(principal.tokenId, rate, burst, this.clock());
    if (!decision.allowed) throw rateLimited('too many requests for this token', decision.retryAfterSeconds);
  }
}

function rateLimited(message: string, retryAfterSeconds: number): LocusError {
  return new LocusError('rate_limited', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}
