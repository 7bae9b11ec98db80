/** Id globs, realm keys and `per` rights (domain/id-glob.ts, domain/realm-key.ts, auth/rights.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/principal.js';
import { allowedOn, idFilter, keepAllowed, mayManageRealm, parseDpv, parsePer, providesData, readFilter, realmAllows } from '../../internal/auth/rights.js';
import type { Right } from '../../internal/auth/principal.js';
import { globMatches } from '../../internal/domain/id-glob.js';
import { realmKey, realmLabel, splitRealmKey } from '../../internal/domain/realm-key.js';
import { parseTenantId } from '../../internal/domain/tenant.js';
import { realmToken } from '../../internal/events/port.js';
import { expectLocusError } from '../support/locus-error.js';

describe('id globs', () => {
  const cases: [string, string, boolean][] = [
    ['*', '', true],
    ['*', 'anything/at/all', true],
    ['car/*', 'car/1', true],
    ['car/*', 'car/', true],
    ['car/*', 'car', false],
    ['car/*', 'bus/1', false],
    ['*/7', 'car/7', true],
    ['*/7', 'car/17', false],
    ['*/7', 'a/b/7', true],
    ['*/7', 'car/71', false],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'acb', false],
    ['exact', 'exact', true],
    ['exact', 'exact2', false],
    ['**', 'x', true],
    ['a.b', 'aXb', false],
  ];
  for (const [pattern, id, expected] of cases) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(id)}`, () => {
      assert.equal(globMatches(pattern, id), expected);
    });
  }
});

describe('realm keys', () => {
  it('the default tenant keeps the name as key; other tenants get a key that splits back', () => {
    assert.equal(realmKey('default', 'fleet'), 'fleet');
    assert.notEqual(realmKey('acme', 'fleet'), 'fleet');
    assert.deepEqual(splitRealmKey(realmKey('acme', 'fleet')), { tenant: 'acme', name: 'fleet' });
    assert.deepEqual(splitRealmKey('fleet'), { tenant: 'default', name: 'fleet' });
    assert.equal(realmLabel(realmKey('acme', 'a/b')), 'acme/a/b');
  });

  it('keys never collide: across tenants, and with any default-tenant name (names hold no control characters)', () => {
    const names = ['fleet', 'acme', 'acme/fleet', 'acme:fleet', 'acme fleet', 'x\u00e9'];
    const tenants = ['default', 'acme', 'acme-2', 'a'];
    const seen = new Map<string, string>();
    for (const tenant of tenants) {
      for (const name of names) {
        const key = realmKey(tenant, name);
        assert.equal(seen.get(key), undefined, `${tenant}/${name} collides with ${String(seen.get(key))}`);
        seen.set(key, `${tenant}/${name}`);
        // A default-tenant name never holds the separator, so a non-default key is never one.
        if (tenant !== 'default') assert.ok(key.includes('\u001f'));
      }
    }
  });

  it('a key is one NATS subject token (no dots, stars or spaces)', () => {
    assert.match(realmToken(realmKey('acme', 'a.b *>')), /^[A-Za-z0-9_%-]+$/);
  });

  it('tenant ids: 1-64 of a-z, 0-9 and -', () => {
    assert.equal(parseTenantId('acme-2'), 'acme-2');
    for (const bad of ['', 'Acme', 'a_b', 'a b', 'a\u001fb', 'x'.repeat(65), 7]) expectLocusError(() => parseTenantId(bad), 'invalid_id');
  });
});

function jwt(per: unknown, realm: string | null = null): Principal {
  const parsed = parsePer(per);
  assert.ok('rights' in parsed);
  return { tokenId: 'jwt:k:u', kind: 'jwt', tenant: 'acme', realm, scope: 'admin', rights: parsed.rights };
}

describe('per rights', () => {
  it('absent per: full rights, realm management included', () => {
    const p = jwt(undefined);
    for (const right of ['C', 'R', 'U', 'D'] as const) {
      assert.equal(realmAllows(p, 'any', right), true);
      assert.equal(allowedOn(p, 'any', right, 'x/y'), true);
      assert.equal(mayManageRealm(p, 'any', right), true);
    }
  });

  it('letters per realm and id glob; realm key * covers every realm', () => {
    const p = jwt({ fleet: { 'car/*': 'RU', 'depot/1': 'C' }, '*': { 'public/*': 'R' } });
    assert.equal(realmAllows(p, 'fleet', 'R'), true);
    assert.equal(realmAllows(p, 'fleet', 'D'), false);
    assert.equal(realmAllows(p, 'other', 'R'), true);
    assert.equal(realmAllows(p, 'other', 'U'), false);
    assert.equal(allowedOn(p, 'fleet', 'U', 'car/7'), true);
    assert.equal(allowedOn(p, 'fleet', 'U', 'bus/7'), false);
    assert.equal(allowedOn(p, 'fleet', 'C', 'depot/1'), true);
    assert.equal(allowedOn(p, 'fleet', 'C', 'depot/2'), false);
    assert.equal(allowedOn(p, 'fleet', 'R', 'public/x'), true);
    assert.equal(allowedOn(p, 'other', 'R', 'car/7'), false);
    assert.equal(mayManageRealm(p, 'fleet', 'U'), false);
  });

  it('realm management with per needs the letter on pattern * of the realm (or of realm *)', () => {
    assert.equal(mayManageRealm(jwt({ fleet: { '*': 'CRUD' } }), 'fleet', 'D'), true);
    assert.equal(mayManageRealm(jwt({ fleet: { '*': 'R' } }), 'fleet', 'D'), false);
    assert.equal(mayManageRealm(jwt({ '*': { '*': 'C' } }), 'new', 'C'), true);
  });

  it('a realm-bound key reaches its realm only', () => {
    const p = jwt(undefined, 'fleet');
    assert.equal(realmAllows(p, 'fleet', 'D'), true);
    assert.equal(realmAllows(p, 'other', 'R'), false);
    assert.equal(allowedOn(p, 'other', 'R', 'x'), false);
    assert.equal(mayManageRealm(p, 'other', 'C'), false);
  });

  it('opaque tokens: R needs read, C/U/D write; admin scope manages realms, other scopes do not', () => {
    const read: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'fleet', scope: 'read' };
    const write: Principal = { ...read, scope: 'write' };
    const admin: Principal = { ...read, scope: 'admin' };
    assert.equal(realmAllows(read, 'fleet', 'R'), true);
    assert.equal(realmAllows(read, 'fleet', 'U'), false);
    assert.equal(realmAllows(write, 'fleet', 'D'), true);
    assert.equal(realmAllows(write, 'other', 'R'), false);
    assert.equal(realmAllows(admin, 'other', 'R'), true);
    assert.equal(mayManageRealm(write, 'fleet', 'U'), false);
    assert.equal(mayManageRealm(admin, 'fleet', 'U'), true);
  });

  it('per and dpv shapes', () => {
    assert.ok('invalid' in parsePer({ r: { '*': 'CRUDX' } }));
    assert.ok('invalid' in parsePer({ r: '*' }));
    assert.ok('invalid' in parseDpv({ r: [1] }));
    const dpv = parseDpv({ fleet: ['car/*'], '*': ['beacon/1'] });
    assert.ok('dataProvider' in dpv);
    const p: Principal = { ...jwt(undefined), dataProvider: dpv.dataProvider };
    assert.equal(providesData(p, 'fleet', 'car/1'), true);
    assert.equal(providesData(p, 'other', 'beacon/1'), true);
    assert.equal(providesData(p, 'other', 'car/1'), false);
  });
});

describe('id filters (readFilter, idFilter): allowedOn prepared once per realm', () => {
  const ids = ['car/1', 'car/2/x', 'bus/1', 'depot/1', 'depot/2', 'public/a', '*', 'x', 'carx'];
  const rights: Right[] = ['C', 'R', 'U', 'D'];

  it('null (no per-entity work) when every id is allowed: no per, opaque tokens within their scope, a pattern of only *', () => {
    assert.equal(readFilter(jwt(undefined), 'fleet'), null);
    assert.equal(readFilter(jwt({ fleet: { '*': 'R' } }), 'fleet'), null);
    assert.equal(readFilter(jwt({ fleet: { 'car/*': 'R' }, '*': { '**': 'R' } }), 'fleet'), null);
    const read: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'fleet', scope: 'read' };
    assert.equal(readFilter(read, 'fleet'), null);
    assert.equal(idFilter({ ...read, scope: 'write' }, 'fleet', 'D'), null);
  });

  it('nothing passes when the realm is out of reach, the scope too low, or no pattern grants the letter', () => {
    const read: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'fleet', scope: 'read' };
    for (const filter of [idFilter(read, 'fleet', 'U'), readFilter(read, 'other'), readFilter(jwt({ fleet: { 'car/*': 'U' } }), 'fleet'), readFilter(jwt(undefined, 'fleet'), 'other')]) {
      assert.ok(filter !== null);
      for (const id of ids) assert.equal(filter(id), false, id);
    }
  });

  it('agrees with allowedOn for every id, right and realm', () => {
    const principals = [
      jwt({ fleet: { 'car/*': 'RU', 'depot/1': 'C', '*/2': 'D' }, '*': { 'public/*': 'R', x: 'R' } }),
      jwt({ fleet: { 'car/*': 'R' } }, 'fleet'),
      jwt({ '*': { 'car/*': 'CRUD', 'bus/*': 'R' } }),
      jwt(undefined),
    ];
    for (const p of principals) {
      for (const realm of ['fleet', 'other']) {
        for (const right of rights) {
          const filter = idFilter(p, realm, right);
          for (const id of ids) assert.equal(filter === null ? true : filter(id), allowedOn(p, realm, right, id), `${realm} ${right} ${id}`);
        }
      }
    }
  });

  it('keepAllowed keeps the readable entries in order, and the very array when the filter is null', () => {
    const entries = ids.map((id) => ({ id }));
    assert.equal(keepAllowed(entries, null), entries);
    const filter = readFilter(jwt({ fleet: { 'car/*': 'R', x: 'R' } }), 'fleet');
    assert.deepEqual(keepAllowed(entries, filter).map((e) => e.id), ['car/1', 'car/2/x', 'x']);
  });
});
