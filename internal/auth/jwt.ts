/**
 * Tenant JWT sign-in (decisions.md "Tenants"; hivekit-compat.md §2, §12.7; hivekit-rest.md
 * D7), with `jose`: HS256 only. The header's `kid` picks a tenant's signing key; a token
 * without `kid` is checked with LOCUS_JWT_SECRET, the default tenant's key (unset: refused).
 * The HMAC key is the secret string's UTF-8 bytes (what jsonwebtoken and jose take for a
 * string secret). `exp` and `nbf` are honoured with a small leeway; `iat` and unknown claims
 * are accepted. `sub` must be a non-empty string (compat §2's recommendation: it names the
 * caller in logs and rate limits). A `tnd` claim must name the key's tenant. `per` and `dpv`
 * must have their shapes (auth/rights.ts).
 *
 * Every failure is 401 with the texts of compat §12.7 where they apply.
 */
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { SigningKeyRecord } from '../domain/types.js';
import { LocusError } from '../errors.js';
import { defaultTenant, type Principal } from './principal.js';
import { parseDpv, parsePer } from './rights.js';

export const jwtTexts = {
  signature: 'signature is invalid',
  expired: 'token is expired',
  notYetValid: 'token is not valid yet',
  malformed: 'token is malformed',
  unknownKey: 'signing key not found',
} as const;

/** Seconds of clock difference `exp` and `nbf` tolerate. */
export const JWT_LEEWAY_S = 30;

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when a secret has the form of a compact JWT (three base64url segments). */
export function looksLikeJwt(secret: string): boolean {
  return COMPACT_JWS.test(secret);
}

/** A 401 with the text; jose's error is not kept as the cause (it may carry the token's claims into a log). */
export function jwtFailure(message: string): LocusError {
  return new LocusError('unauthorized', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

/** Where verification finds keys. */
export interface KeyLookup {
  /** A tenant's key by id; null when unknown (revoked). */
  key(kid: string): Promise<SigningKeyRecord | null>;
  /** LOCUS_JWT_SECRET; null when unset. */
  defaultSecret: string | null;
}

export interface VerifiedJwt {
  principal: Principal;
  /** The key that signed it (null: LOCUS_JWT_SECRET). */
  kid: string | null;
}

/** The sign-in failure for an error of verification; anything else is rethrown. */
function failureOf(err: unknown): LocusError {
  if (err instanceof LocusError) return err;
  if (err instanceof joseErrors.JWTExpired) return jwtFailure(jwtTexts.expired);
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return jwtFailure(err.claim === 'nbf' && err.reason === 'check_failed' ? jwtTexts.notYetValid : jwtTexts.malformed);
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JOSEAlgNotAllowed) {
    return jwtFailure(jwtTexts.signature);
  }
  if (err instanceof joseErrors.JOSEError) return jwtFailure(jwtTexts.malformed);
  // Not the token's fault (a failing store): passed on as it is.
  throw err;
}

/** Verifies a compact JWT and builds its principal; a LocusError `unauthorized` otherwise. */
export async function verifyJwt(token: string, keys: KeyLookup, nowMs: number): Promise<VerifiedJwt> {
  try {
    if (!looksLikeJwt(token)) throw jwtFailure(jwtTexts.malformed);
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      // jose throws a TypeError for an undecodable header.
      throw jwtFailure(jwtTexts.malformed);
    }
    const kid = header.kid;
    if (kid !== undefined && typeof kid !== 'string') throw jwtFailure(jwtTexts.malformed);
    let tenant = defaultTenant;
    let realm: string | null = null;
    let secret: string;
    if (kid === undefined) {
      if (keys.defaultSecret === null) throw jwtFailure(jwtTexts.unknownKey);
      secret = keys.defaultSecret;
    } else {
      const key = await keys.key(kid);
      if (key === null) throw jwtFailure(jwtTexts.unknownKey);
      ({ tenant, realm, secret } = key);
    }
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      clockTolerance: JWT_LEEWAY_S,
      currentDate: new Date(nowMs),
    });
    return { principal: principalOf(payload, kid ?? null, tenant, realm), kid: kid ?? null };
  } catch (err) {
    throw failureOf(err);
  }
}

function principalOf(payload: JWTPayload, kid: string | null, tenant: string, realm: string | null): Principal {
  const { sub, tnd } = payload;
  if (typeof sub !== 'string' || sub === '') throw jwtFailure('token subject (sub) must be a non-empty string');
  if (tnd !== undefined && tnd !== tenant) throw jwtFailure('token tenant (tnd) does not match its signing key');
  const per = parsePer(payload.per);
  if ('invalid' in per) throw jwtFailure(`token claim ${per.invalid}`);
  const dpv = parseDpv(payload.dpv);
  if ('invalid' in dpv) throw jwtFailure(`token claim ${dpv.invalid}`);
  const principal: Principal = {
    tokenId: `jwt:${kid ?? 'default'}:${sub}`,
    kind: 'jwt',
    tenant,
    realm,
    scope: 'admin',
    rights: per.rights,
    dataProvider: dpv.dataProvider,
    subject: sub,
  };
  if (typeof payload.exp === 'number') principal.expiresAt = payload.exp * 1000;
  return principal;
}
