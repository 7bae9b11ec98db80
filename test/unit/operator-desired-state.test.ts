/** The operator's pure decisions (internal/operator/desired-state.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  credentialsLedger,
  credentialsSecretLabels,
  credentialsSecretName,
  desiredRealm,
  dueRetiredKeys,
  dueSuperseded,
  FINALIZER,
  nextStep,
  realmIdOwner,
  realmKeysOfSecret,
  replacedIds,
  retiredKeys,
  retiredKeysAnnotation,
  ROTATE_ANNOTATION,
  ROTATIONS_APPLIED_ANNOTATION,
  rotationRequest,
  sameStatus,
  statusFor,
  supersede,
  withAppliedRotation,
  withFinalizer,
} from '../../internal/operator/desired-state.js';
import { SUPERSEDED_CREDENTIALS_MAX, type RealmResource } from '../../internal/kube/realm-resource.js';

function realm(meta: Partial<RealmResource['metadata']> = {}, spec: RealmResource['spec'] = {}): RealmResource {
  return { apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'fleet', namespace: 'tenant-a', generation: 3, uid: 'u1', ...meta }, spec };
}

void describe('operator desired state', () => {
  void it('the next step: finalizer first, finalize only while holding it', () => {
    assert.equal(nextStep(null), 'nothing');
    assert.equal(nextStep(realm()), 'add-finalizer');
    assert.equal(nextStep(realm({ finalizers: ['other', FINALIZER] })), 'reconcile');
    assert.equal(nextStep(realm({ finalizers: [FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' })), 'finalize');
    assert.equal(nextStep(realm({ finalizers: ['other'], deletionTimestamp: '2026-01-01T00:00:00Z' })), 'nothing');
  });

  void it('adds and removes only its own finalizer', () => {
    assert.deepEqual(withFinalizer(undefined, true), [FINALIZER]);
    assert.deepEqual(withFinalizer(['a', FINALIZER, 'b'], true), ['a', 'b', FINALIZER]);
    assert.deepEqual(withFinalizer(['a', FINALIZER, 'b'], false), ['a', 'b']);
  });

  void it('maps the spec to the tenant, realm id and full settings (absent fields are the defaults again)', () => {
    assert.deepEqual(desiredRealm(realm({}, { realmId: 'f-1', label: 'Fleet', settings: { historyRetentionDays: 0, rateLimitPerSecond: 5 } })), {
      tenant: 'tenant-a',
      realmId: 'f-1',
      label: 'Fleet',
      settings: { connectionTimeout: 120, historyRetentionDays: 0, rateLimit: 5 },
    });
    assert.deepEqual(desiredRealm(realm()).settings, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null });
    assert.equal(desiredRealm(realm()).realmId, 'fleet');
    assert.throws(() => desiredRealm(realm({ namespace: undefined })), /no namespace/);
  });

  void it('the oldest live Realm declaring a realm id owns it', () => {
    const a = realm({ name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' }, { realmId: 'x' });
    const b = realm({ name: 'b', creationTimestamp: '2026-01-02T00:00:00Z' }, { realmId: 'x' });
    const c = realm({ name: 'c', creationTimestamp: '2025-01-01T00:00:00Z' }, { realmId: 'y' });
    assert.equal(realmIdOwner(a, [a, b, c]), null);
    assert.equal(realmIdOwner(b, [a, b, c])?.metadata.name, 'a');
    const aGoing = { ...a, metadata: { ...a.metadata, deletionTimestamp: '2026-02-01T00:00:00Z' } };
    assert.equal(realmIdOwner(b, [aGoing, b]), null, 'a Realm being deleted owns nothing');
    assert.equal(realmIdOwner(aGoing, [aGoing, b])?.metadata.name, 'b');
    const twin = realm({ name: 'a2', creationTimestamp: '2026-01-01T00:00:00Z' }, { realmId: 'x' });
    assert.equal(realmIdOwner(twin, [a, twin])?.metadata.name, 'a', 'same time: the name decides');
  });

  void it('names the credentials Secret after the Realm, within 253 characters', () => {
    assert.equal(credentialsSecretName('fleet'), 'fleet-locus-credentials');
    const long = credentialsSecretName('a'.repeat(253));
    assert.ok(long.length <= 253);
    assert.match(long, /^a+-[0-9a-f]{10}-locus-credentials$/);
    assert.notEqual(long, credentialsSecretName(`${'a'.repeat(252)}b`));
    // A label value holds at most 63 characters: a longer Realm name is left out of the labels.
    assert.deepEqual(credentialsSecretLabels('fleet'), { 'app.kubernetes.io/managed-by': 'locus-operator', 'locus.dev/realm': 'fleet' });
    assert.equal(credentialsSecretLabels('a'.repeat(63))['locus.dev/realm'], 'a'.repeat(63));
    assert.deepEqual(credentialsSecretLabels('a'.repeat(64)), { 'app.kubernetes.io/managed-by': 'locus-operator' });
  });

  void it('rotates for a new annotation value only, from the Realm or the Secret', () => {
    assert.equal(rotationRequest(undefined, undefined), null);
    assert.equal(rotationRequest({ [ROTATE_ANNOTATION]: '1' }, {}), '1');
    assert.equal(rotationRequest({ [ROTATE_ANNOTATION]: ' ' }, {}), null);
    const applied = { [ROTATIONS_APPLIED_ANNOTATION]: withAppliedRotation({}, '1') };
    assert.equal(rotationRequest({ [ROTATE_ANNOTATION]: '1' }, applied), null);
    assert.equal(rotationRequest({ [ROTATE_ANNOTATION]: '1' }, { ...applied, [ROTATE_ANNOTATION]: 'x' }), 'x');
    assert.equal(rotationRequest({}, { [ROTATIONS_APPLIED_ANNOTATION]: 'not json', [ROTATE_ANNOTATION]: '1' }), '1');
    let annotations: Record<string, string> = {};
    for (let i = 0; i < 30; i++) annotations = { [ROTATIONS_APPLIED_ANNOTATION]: withAppliedRotation(annotations, String(i)) };
    assert.equal((JSON.parse(annotations[ROTATIONS_APPLIED_ANNOTATION] ?? '[]') as string[]).length, 20);
  });

  void it('retired keys: read back what was written, due ones found, the next expiry given', () => {
    const retired = new Map([['key_a', 1000], ['key_b', 5000]]);
    const annotations = { 'locus.dev/retired-keys': retiredKeysAnnotation(retired) };
    assert.deepEqual(retiredKeys(annotations), retired);
    assert.deepEqual(dueRetiredKeys(retired, 2000), { due: ['key_a'], nextInMs: 3000 });
    assert.deepEqual(dueRetiredKeys(retired, 6000), { due: ['key_a', 'key_b'], nextInMs: null });
    assert.deepEqual(retiredKeys({ 'locus.dev/retired-keys': '{"k":"not a time","j":3}' }).size, 0);
    assert.deepEqual(retiredKeys({ 'locus.dev/retired-keys': '[' }).size, 0);
  });

  void it('status: Ready with three conditions; a failure is Degraded and keeps observedGeneration', () => {
    const now = '2026-01-01T00:00:00.000Z';
    const issued = { tokenId: 'tok_1', keyId: 'key_1', superseded: [] };
    const ready = statusFor(realm(), { kind: 'ready', realmId: 'fleet', credentialsSecret: 'fleet-locus-credentials', credentials: issued }, now);
    assert.equal(ready.phase, 'Ready');
    assert.equal(ready.observedGeneration, 3);
    assert.deepEqual(ready.conditions?.map((c) => [c.type, c.status, c.reason]), [
      ['Ready', 'True', 'Reconciled'],
      ['Provisioned', 'True', 'RealmProvisioned'],
      ['Degraded', 'False', 'Healthy'],
    ]);
    // Unchanged conditions keep their transition time, so the same outcome needs no write.
    const later = statusFor(realm({}, {}), { kind: 'ready', realmId: 'fleet', credentialsSecret: 'fleet-locus-credentials', credentials: issued }, '2026-01-02T00:00:00.000Z');
    const withStatus = { ...realm(), status: ready };
    const again = statusFor(withStatus, { kind: 'ready', realmId: 'fleet', credentialsSecret: 'fleet-locus-credentials', credentials: issued }, '2026-01-02T00:00:00.000Z');
    assert.ok(sameStatus(ready, again));
    assert.ok(!sameStatus(ready, later));

    const failed = statusFor({ ...realm({ generation: 4 }), status: ready }, { kind: 'failed', realmId: 'fleet', provisioned: true, reason: 'ReconcileFailed', message: 'store down' }, '2026-01-03T00:00:00.000Z');
    assert.equal(failed.phase, 'Degraded');
    assert.equal(failed.observedGeneration, 3);
    assert.equal(failed.credentialsSecret, 'fleet-locus-credentials');
    assert.deepEqual(failed.credentials, issued, 'what was issued stays recorded');
    const byType = Object.fromEntries((failed.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(byType.Ready?.status, 'False');
    assert.equal(byType.Ready?.message, 'store down');
    assert.equal(byType.Provisioned?.status, 'True');
    assert.equal(byType.Provisioned?.lastTransitionTime, now, 'unchanged: keeps its time');
    assert.equal(byType.Degraded?.status, 'True');
    const notYet = statusFor(realm(), { kind: 'failed', realmId: 'fleet', provisioned: false, reason: 'ReconcileFailed', message: 'x' }, now);
    assert.equal(notYet.phase, 'Provisioning');
  });

  void it('superseded credentials: what a new mint replaces, when each is due, never the current ones', () => {
    const current = { tokenId: 'tok_new', keyId: 'key_new' };
    // The Secret's previous ids and those the status recorded (a deleted Secret's), each once.
    const ledger = credentialsLedger({ credentials: { tokenId: 'tok_gone', keyId: 'key_new', superseded: [{ id: 'tok_older', revokeAt: '2026-01-01T00:00:10.000Z' }] } });
    assert.deepEqual(replacedIds(ledger, { tokenId: 'tok_old', keyId: 'key_new' }, current), ['tok_old', 'tok_gone']);
    assert.deepEqual(replacedIds(ledger, { tokenId: 'tok_older' }, current), ['tok_gone'], 'already superseded: not again');
    assert.deepEqual(replacedIds(credentialsLedger(undefined), null, current), []);

    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    const { credentials, revokeNow } = supersede(ledger, current, ['tok_old'], t0 + 60_000);
    assert.deepEqual(revokeNow, []);
    assert.deepEqual(credentials, {
      tokenId: 'tok_new',
      keyId: 'key_new',
      superseded: [
        { id: 'tok_older', revokeAt: '2026-01-01T00:00:10.000Z' },
        { id: 'tok_old', revokeAt: '2026-01-01T00:01:00.000Z' },
      ],
    });
    assert.deepEqual(dueSuperseded(credentials.superseded, t0), { due: [], nextInMs: 10_000 });
    assert.deepEqual(dueSuperseded(credentials.superseded, t0 + 10_000), { due: ['tok_older'], nextInMs: 50_000 });
    assert.deepEqual(dueSuperseded([{ id: 'tok_x', revokeAt: 'garbage' }], t0), { due: ['tok_x'], nextInMs: null }, 'an unreadable time is due');

    // Bounded: past the limit the earliest due go at once.
    const many = Array.from({ length: SUPERSEDED_CREDENTIALS_MAX }, (_, i) => ({ id: `tok_${i}`, revokeAt: new Date(t0 + i).toISOString() }));
    const full = supersede({ superseded: many }, current, ['tok_late'], t0 + 1_000_000);
    assert.deepEqual(full.revokeNow, ['tok_0']);
    assert.equal(full.credentials.superseded.length, SUPERSEDED_CREDENTIALS_MAX);
    assert.equal(full.credentials.superseded.at(-1)?.id, 'tok_late');
  });

  void it("a Secret's change concerns its owning Realm, or for the tenant key every Realm of the namespace", () => {
    const names = (ns: string): string[] => (ns === 'tenant-a' ? ['fleet', 'trucks'] : []);
    const owner = { kind: 'Realm', apiVersion: 'locus.dev/v1alpha1', name: 'fleet' };
    assert.deepEqual(realmKeysOfSecret({ namespace: 'tenant-a', name: 'fleet-locus-credentials', labels: { 'locus.dev/realm': 'fleet' }, owners: [owner] }, names), ['tenant-a/fleet']);
    assert.deepEqual(realmKeysOfSecret({ namespace: 'tenant-a', name: 'x-locus-credentials', labels: { 'locus.dev/realm': 'x' }, owners: [] }, names), ['tenant-a/x'], 'the label when no owner');
    assert.deepEqual(realmKeysOfSecret({ namespace: 'tenant-a', name: 'other', labels: {}, owners: [{ ...owner, apiVersion: 'example.com/v1' }] }, names), [], "another group's Realm");
    assert.deepEqual(realmKeysOfSecret({ namespace: 'tenant-a', name: 'locus-tenant-key', labels: {}, owners: [] }, names), ['tenant-a/fleet', 'tenant-a/trucks']);
    assert.deepEqual(realmKeysOfSecret({ namespace: 'tenant-b', name: 'locus-tenant-key', labels: {}, owners: [] }, names), []);
  });
});
