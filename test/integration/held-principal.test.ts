/**
 * A signed-in connection checks its token at every message from memory
 * (Authenticator.heldPrincipal, no promise, no SHA-256): it must answer exactly as
 * authenticate does, and stop answering (so the connection asks the store, which refuses)
 * when a token is revoked, a key revoked, a JWT expired, or the hold time (HOLD_MS) is over.
 * Two service stacks on one SQLite store, one bus, as two API processes; a third stack on a
 * bus of its own is never told.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { Authenticator } from '../../internal/auth/authenticator.js';
import { HeldSigningKeys, HeldTokens, HOLD_MS } from '../../internal/auth/held-lookups.js';
import { defaultTenant } from '../../internal/auth/principal.js';
import { hashSecret } from '../../internal/auth/tokens.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { ControlChannel } from '../../internal/service/control.js';
import { RealmService } from '../../internal/service/realms.js';
import { TenantService } from '../../internal/service/tenants.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

/** Lets the local bus deliver what is queued (it delivers in the next turn). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const start = Date.UTC(2026, 0, 1);

function stack(store: ReturnType<typeof openSqliteStore>, bus: LocalEventBus, clock: () => number) {
  const control = new ControlChannel(bus);
  const realms = new RealmService(store, clock, new ChangeStream(), bus, control);
  const tenants = new TenantService(store, clock, control);
  const tokens = new HeldTokens(store.tokens, clock);
  const keys = new HeldSigningKeys(store.signingKeys, clock);
  for (const cache of [realms, tokens, keys]) control.add(cache);
  const auth = new Authenticator(tokens, 'admin-secret-0123456789', { signingKeys: keys, clock });
  return { realms, tenants, auth, control };
}

describe('the principal held for a signed-in secret', () => {
  const store = openSqliteStore(':memory:');
  const shared = new LocalEventBus();
  const deafBus = new LocalEventBus();
  let now = start;
  const clock = (): number => now;
  const a = stack(store, shared, clock);
  const b = stack(store, shared, clock);
  const deaf = stack(store, deafBus, clock);
  after(async () => {
    for (const s of [a, b, deaf]) s.control.close();
    await shared.close();
    await deafBus.close();
    await store.close();
  });

  it('is what authenticate gives, until the token is revoked (told at once, else within HOLD_MS)', async () => {
    now = start;
    await a.realms.put(defaultTenant, 'fleet', undefined);
    const issued = await a.realms.createToken(defaultTenant, 'fleet', { scope: 'write' });
    const hash = hashSecret(issued.token);
    for (const s of [a, b, deaf]) {
      assert.equal(s.auth.heldPrincipal(hash), undefined, 'nothing held before the first sign-in');
      const signedIn = await s.auth.authenticate(issued.token);
      assert.deepEqual(s.auth.heldPrincipal(hash), signedIn);
      assert.deepEqual(await s.auth.authenticate(issued.token, hash), signedIn, 'the hash given is the hash used');
    }
    await a.realms.revokeToken(defaultTenant, 'fleet', issued.id);
    assert.equal(a.auth.heldPrincipal(hash), undefined, 'the revoking stack holds it no more');
    await assert.rejects(a.auth.authenticate(issued.token, hash), { code: 'unauthorized' });
    await turn();
    assert.equal(b.auth.heldPrincipal(hash), undefined, 'told over the bus');
    await assert.rejects(b.auth.authenticate(issued.token, hash), { code: 'unauthorized' });
    assert.notEqual(deaf.auth.heldPrincipal(hash), undefined, 'never told: held until HOLD_MS');
    now += HOLD_MS;
    assert.equal(deaf.auth.heldPrincipal(hash), undefined, 'the hold is over');
    await assert.rejects(deaf.auth.authenticate(issued.token, hash), { code: 'unauthorized' });
  });

  it('holds a JWT until it expires or its key is revoked; the admin token always', async () => {
    now = start;
    await a.tenants.create('acme', { label: 'Acme' });
    const key = await a.tenants.createKey('acme', {});
    await turn();
    const exp = Math.floor(start / 1000) + 3600;
    const jwt = await new SignJWT({ sub: 'device-1', exp }).setProtectedHeader({ alg: 'HS256', kid: key.id }).sign(new TextEncoder().encode(key.secret));
    const hash = hashSecret(jwt);
    for (const s of [a, b]) {
      const signedIn = await s.auth.authenticate(jwt);
      assert.deepEqual(s.auth.heldPrincipal(hash), signedIn);
    }
    assert.equal(a.auth.heldPrincipal(hashSecret('admin-secret-0123456789'))?.kind, 'admin');

    // Past the key's hold the key is asked of the store again: not decided from memory.
    now += HOLD_MS;
    assert.equal(a.auth.heldPrincipal(hash), undefined);
    assert.equal((await a.auth.authenticate(jwt, hash)).tenant, 'acme');
    assert.equal(a.auth.heldPrincipal(hash)?.tenant, 'acme', 'held again once the key was looked up');

    await a.tenants.revokeKey('acme', key.id);
    await turn();
    for (const s of [a, b]) {
      assert.equal(s.auth.heldPrincipal(hash), undefined, 'the key was revoked');
      await assert.rejects(s.auth.authenticate(jwt, hash), { code: 'unauthorized' });
    }
  });

  it('does not hold an expired JWT', async () => {
    now = start;
    const key = await a.tenants.createKey('acme', {});
    // The key's control message first: a lookup it overtakes is not held (held-lookups.ts).
    await turn();
    const exp = Math.floor(start / 1000) + 60;
    const jwt = await new SignJWT({ sub: 'device-2', exp }).setProtectedHeader({ alg: 'HS256', kid: key.id }).sign(new TextEncoder().encode(key.secret));
    const hash = hashSecret(jwt);
    await a.auth.authenticate(jwt);
    assert.equal(a.auth.heldPrincipal(hash)?.subject, 'device-2');
    now = start + 3600_000;
    assert.equal(a.auth.heldPrincipal(hash), undefined);
    await assert.rejects(a.auth.authenticate(jwt, hash), { code: 'unauthorized' });
  });
});
