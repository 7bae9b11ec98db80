/** Tenant JWT sign-in (auth/jwt.ts, auth/authenticator.ts): every error text of hivekit-compat.md §12.7, claims, held tokens. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompactSign, SignJWT, base64url } from 'jose';
import { Authenticator } from '../../internal/auth/authenticator.js';
import { looksLikeJwt, verifyJwt, type KeyLookup } from '../../internal/auth/jwt.js';
import { hashSecret } from '../../internal/auth/tokens.js';
import type { SigningKeyRecord, TokenRecord } from '../../internal/domain/types.js';
import { LocusError } from '../../internal/errors.js';
import type { TokenStore } from '../../internal/store/port.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const nowS = Math.floor(NOW / 1000);
const DEFAULT_SECRET = 'CHANGE_ME';
const acmeKey: SigningKeyRecord = { id: 'key_acme1', tenant: 'acme', realm: null, secret: 'acme-secret-0123456789', created: '2026-01-01T00:00:00.000Z' };
const boundKey: SigningKeyRecord = { id: 'key_bound', tenant: 'acme', realm: 'fleet', secret: 'bound-secret-0123456789', created: '2026-01-01T00:00:00.000Z' };

function keysOf(records: SigningKeyRecord[], defaultSecret: string | null = DEFAULT_SECRET): KeyLookup & { records: Map<string, SigningKeyRecord> } {
  const map = new Map(records.map((r) => [r.id, r]));
  return { records: map, key: (kid) => Promise.resolve(map.get(kid) ?? null), defaultSecret };
}

interface SignOptions {
  secret?: string;
  kid?: string;
  alg?: string;
  claims?: Record<string, unknown>;
}

async function sign(options: SignOptions = {}): Promise<string> {
  const header: { alg: string; typ: string; kid?: string } = { alg: options.alg ?? 'HS256', typ: 'JWT' };
  if (options.kid !== undefined) header.kid = options.kid;
  return new SignJWT({ sub: 'userName', iat: nowS, ...options.claims })
    .setProtectedHeader(header)
    .sign(new TextEncoder().encode(options.secret ?? DEFAULT_SECRET));
}

async function failure(token: string, keys: KeyLookup = keysOf([acmeKey, boundKey])): Promise<LocusError> {
  try {
    await verifyJwt(token, keys, NOW);
  } catch (err) {
    assert.ok(err instanceof LocusError, String(err));
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.status, 401);
    return err;
  }
  assert.fail('the token was accepted');
}

describe('JWT sign-in: error texts (compat §12.7)', () => {
  const table: [string, () => Promise<string>, string][] = [
    ['wrong secret', () => sign({ secret: 'not the secret' }), 'signature is invalid'],
    ['wrong secret for a kid', () => sign({ kid: 'key_acme1', secret: DEFAULT_SECRET }), 'signature is invalid'],
    ['another algorithm (HS512)', () => sign({ alg: 'HS512' }), 'signature is invalid'],
    ['expired beyond the leeway', () => sign({ claims: { exp: nowS - 31 } }), 'token is expired'],
    ['not yet valid beyond the leeway', () => sign({ claims: { nbf: nowS + 31 } }), 'token is not valid yet'],
    ['two segments', async () => (await sign()).split('.').slice(0, 2).join('.'), 'token is malformed'],
    ['header not JSON', async () => `${base64url.encode('{nope')}.${(await sign()).split('.').slice(1).join('.')}`, 'token is malformed'],
    ['payload not JSON (correctly signed)', () =>
      new CompactSign(new TextEncoder().encode('not json')).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(DEFAULT_SECRET)), 'token is malformed'],
    ['payload tampered with', async () => {
      const [h, , s] = (await sign()).split('.');
      return `${h}.${base64url.encode(JSON.stringify({ sub: 'admin' }))}.${s}`;
    }, 'signature is invalid'],
    ['exp not a number', () => sign({ claims: { exp: 'tomorrow' } }), 'token is malformed'],
    ['unknown kid', () => sign({ kid: 'key_gone' }), 'signing key not found'],
  ];
  for (const [name, make, text] of table) {
    it(`${name} → ${text}`, async () => {
      assert.equal((await failure(await make())).message, text);
    });
  }

  it('no kid and no LOCUS_JWT_SECRET → signing key not found', async () => {
    assert.equal((await failure(await sign(), keysOf([], null))).message, 'signing key not found');
  });

  it('refuses a missing or empty sub, a tnd of another tenant, and bad per/dpv shapes', async () => {
    assert.match((await failure(await sign({ claims: { sub: undefined } }))).message, /sub/);
    assert.match((await failure(await sign({ claims: { sub: '' } }))).message, /sub/);
    assert.match((await failure(await sign({ kid: 'key_acme1', secret: acmeKey.secret, claims: { tnd: 'other' } }))).message, /tnd/);
    assert.match((await failure(await sign({ claims: { tnd: 'acme' } }))).message, /tnd/);
    assert.match((await failure(await sign({ claims: { per: { r: { '*': 'CRX' } } } }))).message, /per/);
    assert.match((await failure(await sign({ claims: { per: ['R'] } }))).message, /per/);
    assert.match((await failure(await sign({ claims: { dpv: { r: 'car/*' } } }))).message, /dpv/);
  });
});

describe('JWT sign-in: principals', () => {
  it('a sub-only token of LOCUS_JWT_SECRET: the default tenant, full rights, no realm', async () => {
    const { principal, kid } = await verifyJwt(await sign(), keysOf([]), NOW);
    assert.equal(kid, null);
    assert.deepEqual(principal, {
      tokenId: 'jwt:default:userName',
      kind: 'jwt',
      tenant: 'default',
      realm: null,
      scope: 'admin',
      rights: null,
      dataProvider: null,
      subject: 'userName',
    });
  });

  it('a kid picks the tenant key; a realm-bound key confines; exp, per and dpv are carried', async () => {
    const exp = nowS + 3600;
    const token = await sign({
      kid: 'key_bound',
      secret: boundKey.secret,
      claims: { tnd: 'acme', exp, per: { fleet: { 'car/*': 'RU' } }, dpv: { fleet: ['car/*'] } },
    });
    const { principal } = await verifyJwt(token, keysOf([acmeKey, boundKey]), NOW);
    assert.equal(principal.tokenId, 'jwt:key_bound:userName');
    assert.equal(principal.tenant, 'acme');
    assert.equal(principal.realm, 'fleet');
    assert.equal(principal.expiresAt, exp * 1000);
    assert.deepEqual([...(principal.rights?.get('fleet')?.get('car/*') ?? [])].sort(), ['R', 'U']);
    assert.deepEqual(principal.dataProvider, { fleet: ['car/*'] });
  });

  it('exp and nbf within the 30 s leeway pass; iat in the future and unknown claims are accepted', async () => {
    await verifyJwt(await sign({ claims: { exp: nowS - 29, nbf: nowS + 29, iat: nowS + 600, iss: 'x', jti: 'y' } }), keysOf([]), NOW);
  });

  it('looksLikeJwt tells compact JWTs from opaque tokens', async () => {
    assert.equal(looksLikeJwt(await sign()), true);
    assert.equal(looksLikeJwt('lcs_abcdefABCDEF0123456789-_'), false);
    assert.equal(looksLikeJwt('a.b'), false);
  });
});

describe('Authenticator with JWTs', () => {
  const noTokens: TokenStore = {
    create: () => Promise.resolve(),
    findByHash: (hash: string) => Promise.resolve(hash === hashSecret('lcs_opaque') ? ({ id: 'tok_1', realm: 'acme\u001ffleet', hash, scope: 'write', created: '' } satisfies TokenRecord) : null),
    listByRealm: () => Promise.resolve([]),
    delete: () => Promise.resolve(false),
  };

  it('verifies a JWT once, then finds it by hash until its key is revoked', async () => {
    const keys = keysOf([acmeKey]);
    let lookups = 0;
    const auth = new Authenticator(noTokens, null, {
      signingKeys: { get: (id) => ((lookups += 1), keys.key(id)) },
      jwtSecret: DEFAULT_SECRET,
      clock: () => NOW,
    });
    const token = await sign({ kid: 'key_acme1', secret: acmeKey.secret });
    assert.equal((await auth.authenticate(token)).tenant, 'acme');
    assert.equal((await auth.principalOf(hashSecret(token))).tokenId, 'jwt:key_acme1:userName');
    assert.ok(lookups >= 2, 'the key is looked up at every use');
    keys.records.delete('key_acme1');
    await assert.rejects(auth.principalOf(hashSecret(token)), { message: 'signing key not found' });
    await assert.rejects(auth.authenticate(token), { message: 'signing key not found' });
  });

  it('a held JWT stops working once it expires', async () => {
    let now = NOW;
    const auth = new Authenticator(noTokens, null, { jwtSecret: DEFAULT_SECRET, clock: () => now });
    const token = await sign({ claims: { exp: nowS + 60 } });
    await auth.authenticate(token);
    now = NOW + 60_000 + 30_000;
    await assert.rejects(auth.principalOf(hashSecret(token)), { message: 'token is expired' });
    await assert.rejects(auth.authenticate(token), { message: 'token is expired' });
  });

  it('opaque tokens keep working; their principal takes the tenant and name of their realm key', async () => {
    const auth = new Authenticator(noTokens, 'admin-token-0123456789', { jwtSecret: DEFAULT_SECRET, clock: () => NOW });
    assert.deepEqual(await auth.authenticate('lcs_opaque'), { tokenId: 'tok_1', kind: 'token', tenant: 'acme', realm: 'fleet', scope: 'write' });
    assert.equal((await auth.authenticate('admin-token-0123456789')).kind, 'admin');
    await assert.rejects(auth.authenticate('lcs_unknown'), { message: 'the token is not valid' });
  });
});
