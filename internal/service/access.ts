/**
 * The gate every realm-scoped request passes, whatever its transport:
 * authenticate (401), authorize realm and scope (403), rate limit (429), then
 * resolve the realm (404).
 */
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { Right } from '../auth/principal.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import { mayManageRealm, reachesRealm, realmAllows } from '../auth/rights.js';
import type { Realm } from '../domain/types.js';
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
   * so that guessing tokens is slow. `hash`: the secret's hashSecret, when the caller holds it.
   */
  authenticate(secret: string | null, source: string | null = null, hash: string | null = null): Promise<Principal> {
    return this.guarded(source, () => this.auth.authenticate(secret, hash));
  }

  /**
   * The principal of a secret's hash when memory alone decides it now (Authenticator.heldPrincipal):
   * a signed-in connection's check at every message, without a promise; undefined: authenticate.
   */
  heldPrincipal(hash: string): Principal | undefined {
    return this.auth.heldPrincipal(hash);
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

  /**
   * Checks an authenticated principal against realm `realmName` of its tenant for right
   * `need` and returns the realm: 403 when the principal is confined to another realm (an
   * opaque realm token, a realm-bound signing key) or lacks the right (opaque tokens: R needs
   * scope read, C/U/D write; JWTs: their `per` claim, auth/rights.ts realmAllows), then 429,
   * then 404 `unknown realm <name>`. Handlers check entity ids with rights.ts allowedOn.
   */
  async enterRealm(principal: Principal, realmName: string, need: Right): Promise<Realm> {
    if (!reachesRealm(principal, realmName)) throw new LocusError('forbidden', 'the token does not belong to this realm');
    if (!realmAllows(principal, realmName, need)) throw new LocusError('forbidden', rightMessage(principal, need));
    const realm = await this.realms.findIn(principal.tenant, realmName);
    this.throttle(principal, realm?.settings.rateLimit ?? null);
    if (realm === null) throw unknownRealm(realmName);
    return realm;
  }

  /**
   * enterRealm for `count` messages that name the same realm with the same right (a run of
   * v1 writes): the same checks and the same outcome for each as `count` calls in a row,
   * with the realm looked up once. Each message is counted; those past the rate budget get
   * the 429, each on its own. Returns the realm (null when there is none: every counted
   * message gets the 404) and, for each message, its error or null.
   */
  async enterRealmEach(principal: Principal, realmName: string, need: Right, count: number): Promise<{ realm: Realm | null; errors: (LocusError | null)[] }> {
    const errors: (LocusError | null)[] = [];
    if (!reachesRealm(principal, realmName)) {
      for (let k = 0; k < count; k++) errors.push(new LocusError('forbidden', 'the token does not belong to this realm'));
      return { realm: null, errors };
    }
    if (!realmAllows(principal, realmName, need)) {
      for (let k = 0; k < count; k++) errors.push(new LocusError('forbidden', rightMessage(principal, need)));
      return { realm: null, errors };
    }
    const realm = await this.realms.findIn(principal.tenant, realmName);
    const rate = realm?.settings.rateLimit ?? null;
    for (let k = 0; k < count; k++) {
      try {
        this.throttle(principal, rate);
        errors.push(realm === null ? unknownRealm(realmName) : null);
      } catch (err) {
        errors.push(err as LocusError);
      }
    }
    return { realm, errors };
  }

  /**
   * Realm management of realm `realmName` in the principal's tenant (create C, update U,
   * delete D): 403 unless rights.ts mayManageRealm allows it, then 429. The caller's service
   * call gives the 404 or 409. Returns the tenant to act in.
   */
  enterRealmManagement(principal: Principal, realmName: string, need: Right): string {
    if (!mayManageRealm(principal, realmName, need)) {
      throw new LocusError('forbidden', 'this token may not manage realms');
    }
    this.throttle(principal, null);
    return principal.tenant;
  }

  /**
   * Listing the realms of the principal's tenant: 403 for opaque tokens below scope admin
   * (they know their one realm), then 429. Returns the tenant; the caller keeps the realms
   * the principal may read (rights.ts realmAllows with R).
   */
  enterTenant(principal: Principal): string {
    if (principal.kind === 'token' && principal.scope !== 'admin') {
      throw new LocusError('forbidden', 'this operation needs a token with scope admin');
    }
    this.throttle(principal, null);
    return principal.tenant;
  }

  /**
   * Counts an action that enters no realm (`sys` actions, unknown or invalid ones) against
   * the caller's rate limit, at its realm's rate when it has one: every action counts.
   */
  async countAction(principal: Principal): Promise<void> {
    const realm = principal.realm === null ? null : await this.realms.findIn(principal.tenant, principal.realm);
    this.throttle(principal, realm?.settings.rateLimit ?? null);
  }

  /**
   * The operators' admin API (/admin/v1): LOCUS_ADMIN_TOKEN or an opaque admin-scoped token.
   * Tenant JWTs manage their realms through /v2/realm and v1 `rea` actions, never here.
   */
  enterAdmin(principal: Principal): void {
    if (principal.kind === 'jwt') throw new LocusError('forbidden', 'the admin API needs an admin token, not a tenant JWT');
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

function rightMessage(principal: Principal, need: Right): string {
  if (principal.kind !== 'jwt') return `this operation needs a token with scope ${need === 'R' ? 'read' : 'write'}`;
  return `the token's permissions (per) do not grant ${need} in this realm`;
}

function rateLimited(message: string, retryAfterSeconds: number): LocusError {
  return new LocusError('rate_limited', message, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}
