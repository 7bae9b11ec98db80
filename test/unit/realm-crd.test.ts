/**
 * The Realm CRD cannot drift: crds/realms.locus.dev.yaml is exactly what internal/kube/realm-crd.ts
 * generates; the schema's properties are exactly the fields of the TypeScript types (checked by
 * the compiler below); its bounds are the domain's (parseRealmSettings accepts each bound and
 * rejects one past it); and the realm id pattern only admits ids the domain accepts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseId } from '../../internal/domain/ids.js';
import { defaultRealmSettings, parseRealmSettings } from '../../internal/domain/realm-settings.js';
import { realmCrd, realmCrdYaml, realmSettingsSchema, realmSpecSchema, realmStatusSchema } from '../../internal/kube/realm-crd.js';
import {
  DELETION_POLICIES,
  REALM_ID_MAX_LENGTH,
  REALM_ID_PATTERN,
  realmIdOf,
  realmSettingsOf,
  SETTINGS_BOUNDS,
  type RealmSpec,
  type RealmSpecSettings,
  type RealmStatus,
} from '../../internal/kube/realm-resource.js';
import { toYaml } from '../../internal/kube/yaml.js';

// Compile-time: the schema's property names are exactly the TypeScript fields, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const specKeys: Same<keyof RealmSpec, keyof typeof realmSpecSchema.properties> = true;
const settingsKeys: Same<keyof RealmSpecSettings, keyof typeof realmSettingsSchema.properties> = true;
const statusKeys: Same<keyof RealmStatus, keyof typeof realmStatusSchema.properties> = true;
const policies: Same<NonNullable<RealmSpec['deletionPolicy']>, (typeof realmSpecSchema.properties.deletionPolicy.enum)[number]> = true;

const crdFile = new URL('../../../crds/realms.locus.dev.yaml', import.meta.url);

void describe('Realm CRD and its TypeScript types', () => {
  void it('crds/realms.locus.dev.yaml is the generated CRD (run node scripts/generate-crd.mjs after a change)', () => {
    assert.equal(readFileSync(crdFile, 'utf8'), realmCrdYaml());
  });

  void it('the compiler checked that schema properties and type fields agree', () => {
    assert.deepEqual([specKeys, settingsKeys, statusKeys, policies], [true, true, true, true]);
  });

  void it('has the group, version, scope, names, status subresource and printer columns', () => {
    interface Version {
      name: string;
      subresources: unknown;
      additionalPrinterColumns: { name: string }[];
    }
    const spec = realmCrd().spec as { group: string; scope: string; names: { shortNames: string[] }; versions: Version[] };
    assert.equal(spec.group, 'locus.dev');
    assert.equal(spec.scope, 'Namespaced');
    assert.deepEqual(spec.names.shortNames, ['rlm']);
    const version = spec.versions[0] as Version;
    assert.equal(version.name, 'v1alpha1');
    assert.deepEqual(version.subresources, { status: {} });
    assert.deepEqual(version.additionalPrinterColumns.map((c) => c.name), ['Realm ID', 'Phase', 'Ready', 'Deletion', 'Age']);
    assert.deepEqual(realmSpecSchema.properties.deletionPolicy.enum, [...DELETION_POLICIES]);
  });

  void it('settings bounds are the domain rules: each bound accepted, one past it rejected', () => {
    const cases = [
      ['connectionTimeoutSeconds', 'connectionTimeout', SETTINGS_BOUNDS.connectionTimeoutSeconds],
      ['historyRetentionDays', 'historyRetentionDays', SETTINGS_BOUNDS.historyRetentionDays],
      ['rateLimitPerSecond', 'rateLimit', SETTINGS_BOUNDS.rateLimitPerSecond],
    ] as const;
    for (const [crdKey, domainKey, { min, max }] of cases) {
      const schema = realmSettingsSchema.properties[crdKey];
      assert.equal(schema.minimum, min, crdKey);
      assert.equal(schema.maximum, max, crdKey);
      for (const ok of [min, max]) {
        const settings = realmSettingsOf({ settings: { [crdKey]: ok } }, defaultRealmSettings);
        assert.equal(settings[domainKey], ok);
        assert.deepEqual(parseRealmSettings({ [domainKey]: ok }, defaultRealmSettings), settings, `${crdKey}=${ok}`);
      }
      for (const bad of [min - 1, max + 1]) {
        assert.throws(() => parseRealmSettings({ [domainKey]: bad }, defaultRealmSettings), /integer/, `${crdKey}=${bad}`);
      }
    }
    // No settings: the base stays.
    assert.deepEqual(realmSettingsOf({}, defaultRealmSettings), defaultRealmSettings);
  });

  void it('every realm id the pattern admits the domain admits, up to the longest', () => {
    const pattern = new RegExp(REALM_ID_PATTERN);
    const longest = `a${'b.c_d-e'.repeat(40)}`.slice(0, REALM_ID_MAX_LENGTH - 1) + 'z';
    assert.equal(longest.length, REALM_ID_MAX_LENGTH);
    for (const id of ['a', 'Z9', 'fleet-1', 'eu.west_2', longest]) {
      assert.ok(pattern.test(id), id);
      assert.equal(parseId(id, 'realm'), id);
    }
    for (const id of ['', '-a', 'a-', 'a b', 'a/b', 'ä', 'a\u0000b', '.a']) assert.ok(!pattern.test(id), JSON.stringify(id));
    assert.equal(realmIdOf({ metadata: { name: 'fleet' }, spec: {} }), 'fleet');
    assert.equal(realmIdOf({ metadata: { name: 'fleet' }, spec: { realmId: 'Fleet_1' } }), 'Fleet_1');
  });

  void it('the YAML writer quotes what YAML would read as another type', () => {
    assert.equal(
      toYaml({ a: 'true', b: 'no', c: '1.0', d: 'plain', e: '.x', f: [], g: {}, h: [{ i: 1, j: [2] }], k: null, l: false }),
      'a: "true"\nb: "no"\nc: "1.0"\nd: plain\ne: ".x"\nf: []\ng: {}\nh:\n- i: 1\n  j:\n  - 2\nk: null\nl: false\n',
    );
  });
});
