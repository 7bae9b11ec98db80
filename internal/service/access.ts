/**
 * The gate every realm-scoped request passes, whatever its transport:
 * authenticate (401), authorize realm and scope (403), rate limit (429), then
 * resolve the realm (404).
 */
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import type { Realm, Scope } from '../domain/types.js';
import { LocusError, notFound } from '../errors.js';
import type { Clock } from './clock.js';
import type { RealmService } from './realms.js';

export interface RateSettings {
  rateLimit: number;
  rateBurst: number;
}

export class Access {
  constructor(
    private readonly auth: Authenticator,
    private readonly realms: RealmService,
    private readonly limiter: RateLimiter,
    private readonly rates: RateSettings,
    private readonly clock: Clock,
  ) {}

  authenticate(secret: string | null): Promise<Principal> {
    return this.auth.authenticate(secret);
  }

  /** The principal of a secret's hash (see Authenticator.principalOf). */
  principalOf(hash: string): Promise<Principal> {
    return this.auth.principalOf(hash);
  }

  /** Checks an authenticated principal against a realm and returns the realm. */
  async enterRealm(principal: Principal, realmId: string, scope: Scope): Promise<Realm> {
    this.auth.authorize(principal, realmId, scope);
    const realm = await this.realms.find(realmId);
    this.throttle(principal, realm?.settings.rateLimit ?? null);
    if (realm === null) throw notFound(`realm ${realmId.slice(0, 256)} not found`);
    return realm;
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
    if (!decision.allowed) {
      throw new LocusError('rate_limited', 'too many requests for this token', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
  }
}
