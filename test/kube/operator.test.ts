/**
 * The Kubernetes operator end to end (issue #23, "Done when"): a real kube-apiserver with etcd
 * (test/support/kube-apiserver.ts) holding the Realm CRD, real operator processes
 * (`node dist/cmd/operator.js`) and a real API process (`node dist/cmd/server.js`) sharing one
 * SQLite file in shared mode, coordinated by a real nats-server. The tests run in order and
 * build on each other: Realms applied early are edited, rotated and deleted later.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { toYaml } from '../../internal/kube/yaml.js';
import { FINALIZER, RETIRED_KEYS_ANNOTATION } from '../../internal/operator/desired-state.js';
import type { RealmResource } from '../../internal/kube/realm-resource.js';
import { call, type Reply } from '../support/harness.js';
import { signToken } from '../support/hivekit-wire.js';
import { kubeToolPath, startKubeApiServer, type KubeApiServer } from '../support/kube-apiserver.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { findPromtool } from '../support/tools.js';
import { startOperatorProcess, type OperatorProcess } from '../support/operator-process.js';
import { spawnServer, type ServerProcess } from '../support/server-process.js';
import { recordSecret } from '../support/test-logs.js';

const crdYaml = readFileSync(new URL('../../../crds/realms.locus.dev.yaml', import.meta.url), 'utf8');
const ADMIN = 'operator-test-admin-token-0123456789';
const LEASE_NS = 'locus-system';
const LEASE = { duration: 4, renew: 3, retry: 1 };
const GRACE_S = 6;
/** The grace period of superseded credentials in these tests. */
const CREDENTIALS_GRACE_S = 6;
/** What the issue asks of a Secret-triggered action: done within this. */
const SECRET_ACTION_MS = 5000;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const OPERATOR_USER = `system:serviceaccount:${LEASE_NS}:locus-operator`;

/** Where the API server takes objects of each kind the chart's rbac.yaml renders. */
const RBAC_PATHS: Record<string, string> = {
  ServiceAccount: `/api/v1/namespaces/${LEASE_NS}/serviceaccounts`,
  ClusterRole: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: `/apis/rbac.authorization.k8s.io/v1/namespaces/${LEASE_NS}/roles`,
  RoleBinding: `/apis/rbac.authorization.k8s.io/v1/namespaces/${LEASE_NS}/rolebindings`,
};

/**
 * The chart's RBAC (charts/locus/templates/rbac.yaml, rendered by helm for release `locus` in
 * LEASE_NS, watching all namespaces) applied to the API server, and a kubeconfig with a token of
 * the operator's ServiceAccount: the operators of these tests have exactly the chart's rights.
 */
async function operatorKubeconfig(kube: KubeApiServer, dir: string): Promise<string> {
  // The chart without files/ (its dashboards are symlinks into deploy/, not needed for RBAC).
  const chart = join(dir, 'chart');
  cpSync(new URL('../../../charts/locus', import.meta.url), chart, { recursive: true, filter: (src) => !/[\\/]files([\\/]|$)/.test(src) });
  const helm = spawnSync(kubeToolPath('helm'), ['template', 'locus', chart, '--namespace', LEASE_NS, '--kube-version', '1.34.4', '--show-only', 'templates/rbac.yaml'], { encoding: 'utf8' });
  assert.equal(helm.status, 0, helm.stderr);
  for (const doc of parseAllDocuments(helm.stdout)) {
    const object = doc.toJS() as { kind?: string } | null;
    if (object?.kind === undefined) continue;
    const path = RBAC_PATHS[object.kind];
    assert.ok(path !== undefined, `unexpected kind ${object.kind} in rbac.yaml`);
    const res = await kube.request('POST', path, object);
    assert.equal(res.status, 201, res.text);
  }
  const token = await kube.request('POST', `/api/v1/namespaces/${LEASE_NS}/serviceaccounts/locus-operator/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  assert.equal(token.status, 201, token.text);
  const path = join(dir, 'operator.kubeconfig');
  writeFileSync(path, toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: kube.url, 'certificate-authority-data': Buffer.from(kube.caPem).toString('base64') } }],
    users: [{ name: 'locus-operator', user: { token: (token.body as { status: { token: string } }).status.token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'locus-operator' } }],
    'current-context': 'test',
  }), { mode: 0o600 });
  return path;
}

interface SecretJson {
  metadata: { resourceVersion: string; annotations?: Record<string, string>; labels?: Record<string, string>; ownerReferences?: { uid: string; kind: string }[] };
  data?: Record<string, string>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, logs?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${logs === undefined ? '' : `\n${logs().split('\n').slice(-40).join('\n')}`}`);
    await sleep(100);
  }
}

void describe('the Kubernetes operator on a real kube-apiserver, with an API process on its store', { timeout: 600_000 }, () => {
  let kube: KubeApiServer;
  let nats: NatsServer;
  let api: ServerProcess;
  let apiUrl: string;
  let dir: string;
  const operators: OperatorProcess[] = [];
  let operator: OperatorProcess;
  let storeUrl: string;
  let kubeconfig: string;

  const realmsPath = (ns: string): string => `/apis/locus.dev/v1alpha1/namespaces/${ns}/realms`;
  const operatorEnv = (): Record<string, string> => ({
    KUBECONFIG: kubeconfig,
    LOCUS_STORE: storeUrl,
    LOCUS_BUS: nats.url,
    LOCUS_OPERATOR_LEASE_NAMESPACE: LEASE_NS,
    LOCUS_OPERATOR_LEASE_DURATION_SECONDS: String(LEASE.duration),
    LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS: String(LEASE.renew),
    LOCUS_OPERATOR_RETRY_PERIOD_SECONDS: String(LEASE.retry),
    LOCUS_OPERATOR_KEY_GRACE_SECONDS: String(GRACE_S),
    LOCUS_OPERATOR_CREDENTIALS_GRACE_SECONDS: String(CREDENTIALS_GRACE_S),
    // Far beyond any wait below: what a test sees happen comes from the watches, not a resync.
    LOCUS_OPERATOR_RESYNC_SECONDS: '600',
    LOCUS_OPERATOR_BACKOFF_BASE_MS: '200',
    LOCUS_OPERATOR_BACKOFF_CAP_MS: '2000',
  });
  async function startOperator(identity: string): Promise<OperatorProcess> {
    const proc = await startOperatorProcess(identity, operatorEnv());
    operators.push(proc);
    return proc;
  }
  const logs = (): string => operators.map((o) => `--- ${o.identity}\n${o.output()}`).join('\n');

  async function applyRealm(ns: string, name: string, spec: Record<string, unknown>): Promise<RealmResource> {
    const res = await kube.request('POST', realmsPath(ns), { apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name }, spec });
    assert.equal(res.status, 201, res.text);
    return res.body as RealmResource;
  }
  async function getRealm(ns: string, name: string): Promise<RealmResource | null> {
    const res = await kube.request('GET', `${realmsPath(ns)}/${name}`);
    if (res.status === 404) return null;
    assert.equal(res.status, 200, res.text);
    return res.body as RealmResource;
  }
  async function patchRealm(ns: string, name: string, patch: unknown): Promise<RealmResource> {
    const res = await kube.request('PATCH', `${realmsPath(ns)}/${name}`, patch, MERGE);
    assert.equal(res.status, 200, res.text);
    return res.body as RealmResource;
  }
  /** Waits until the operator reported Ready for the Realm's current generation. */
  async function ready(ns: string, name: string): Promise<RealmResource> {
    return waitFor(
      `Realm ${ns}/${name} Ready`,
      async () => {
        const realm = await getRealm(ns, name);
        return realm?.status?.phase === 'Ready' && realm.status.observedGeneration === realm.metadata.generation ? realm : null;
      },
      30_000,
      logs,
    );
  }
  async function secretOf(ns: string, name: string): Promise<{ json: SecretJson; data: Record<string, string> } | null> {
    const res = await kube.request('GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
    if (res.status === 404) return null;
    assert.equal(res.status, 200, res.text);
    const json = res.body as SecretJson;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(json.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
    // Tokens and signing keys the operator made: no log of any process may hold them.
    for (const [k, v] of Object.entries(data)) if (k === 'token' || k === 'signingKey' || k.startsWith('retired.')) recordSecret(v);
    return { json, data };
  }
  async function credentials(ns: string, realm: string): Promise<Record<string, string>> {
    const secret = await secretOf(ns, `${realm}-locus-credentials`);
    assert.ok(secret !== null, `no credentials Secret for ${ns}/${realm}`);
    return secret.data;
  }
  async function tenantKey(ns: string): Promise<{ kid: string; secret: string; annotations: Record<string, string> }> {
    const secret = await secretOf(ns, 'locus-tenant-key');
    assert.ok(secret !== null, `no tenant key Secret in ${ns}`);
    return { kid: secret.data.keyId ?? '', secret: secret.data.signingKey ?? '', annotations: secret.json.metadata.annotations ?? {} };
  }
  const jwt = (kid: string, secret: string): Promise<string> => signToken({ sub: 'operator-test' }, { kid, secret });
  const getObject = (realm: string, id: string, token: string): Promise<Reply> => call(apiUrl, 'GET', `/v2/realm/${realm}/object/${id}`, { token });
  const putObject = (realm: string, id: string, token: string): Promise<Reply> => call(apiUrl, 'PUT', `/v2/realm/${realm}/object/${id}`, { token, body: { label: id } });
  async function leaseHolder(): Promise<string | null> {
    const res = await kube.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases/locus-operator`);
    if (res.status !== 200) return null;
    return (res.body as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? null;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'locus-operator-test-'));
    storeUrl = `sqlite:${join(dir, 'locus.db')}`;
    [kube, nats] = await Promise.all([startKubeApiServer(), startNatsServer()]);
    const crd = await kube.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdYaml, { 'content-type': 'application/yaml' });
    assert.equal(crd.status, 201, crd.text);
    for (const ns of ['tenant-a', 'tenant-b', LEASE_NS]) {
      const res = await kube.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      assert.equal(res.status, 201, res.text);
    }
    await waitFor('the Realm API served', async () => (await kube.request('GET', realmsPath('tenant-a'))).status === 200);
    kubeconfig = await operatorKubeconfig(kube, dir);
    api = spawnServer({ LOCUS_STORE: storeUrl, LOCUS_BUS: nats.url, LOCUS_ADMIN_TOKEN: ADMIN }, { killAfterMs: 600_000 });
    await api.listening;
    apiUrl = String((api.logLines().find((l) => l.msg === 'locus listening') ?? {}).httpUrl);
    operator = await startOperator('operator-a');
  });

  after(async () => {
    for (const proc of operators) await proc.stop('SIGKILL');
    api?.cleanup();
    await nats?.stop();
    await kube?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  void it("runs as the chart's ServiceAccount, whose rights stop at what it needs", async () => {
    const as = { 'Impersonate-User': OPERATOR_USER };
    assert.equal((await kube.request('GET', '/api/v1/namespaces/tenant-a/secrets', undefined, as)).status, 200);
    assert.equal((await kube.request('GET', realmsPath('tenant-a'), undefined, as)).status, 200);
    assert.equal((await kube.request('GET', '/api/v1/namespaces/tenant-a/configmaps', undefined, as)).status, 403);
    assert.equal((await kube.request('GET', '/api/v1/namespaces/tenant-a/pods', undefined, as)).status, 403);
    assert.equal((await kube.request('DELETE', `${realmsPath('tenant-a')}/anything`, undefined, as)).status, 403);
    assert.equal((await kube.request('GET', `/apis/coordination.k8s.io/v1/namespaces/tenant-a/leases`, undefined, as)).status, 403);
    assert.match(readFileSync(kubeconfig, 'utf8'), /token:/);
  });

  void it('applying a Realm makes it Ready with a credentials Secret whose token and realm-bound key both work', async () => {
    const applied = await applyRealm('tenant-a', 'fleet', { realmId: 'fleet', label: 'Fleet', settings: { historyRetentionDays: 7 } });
    const realm = await ready('tenant-a', 'fleet');
    assert.ok(realm.metadata.finalizers?.includes(FINALIZER));
    assert.equal(realm.status?.credentialsSecret, 'fleet-locus-credentials');
    assert.equal(realm.status?.realmId, 'fleet');
    const conditions = Object.fromEntries((realm.status?.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(conditions.Ready?.status, 'True');
    assert.equal(conditions.Provisioned?.status, 'True');
    assert.equal(conditions.Degraded?.status, 'False');

    const secret = await secretOf('tenant-a', 'fleet-locus-credentials');
    assert.ok(secret !== null);
    assert.deepEqual(secret.json.metadata.ownerReferences?.map((r) => [r.kind, r.uid]), [['Realm', applied.metadata.uid]]);
    const creds = secret.data;
    assert.equal(creds.tenant, 'tenant-a');
    assert.equal(creds.realm, 'fleet');
    assert.match(creds.token ?? '', /^lcs_/);

    assert.equal((await putObject('fleet', 'a', creds.token ?? '')).status, 200);
    const bound = await jwt(creds.keyId ?? '', creds.signingKey ?? '');
    const read = await getObject('fleet', 'a', bound);
    assert.equal(read.status, 200, read.text);

    const events = await kube.request('GET', '/api/v1/namespaces/tenant-a/events');
    const reasons = (events.body as { items: { reason: string; involvedObject: { name: string } }[] }).items.filter((e) => e.involvedObject.name === 'fleet').map((e) => e.reason);
    for (const reason of ['Created', 'TenantKeyCreated', 'CredentialsCreated']) assert.ok(reasons.includes(reason), `no ${reason} Event in ${reasons.join(', ')}`);
  });

  void it('a Realm whose name is longer than a label value (63) gets its credentials Secret too', async () => {
    const name = `long-${'x'.repeat(90)}`;
    await applyRealm('tenant-a', name, { realmId: 'long-name' });
    const realm = await ready('tenant-a', name);
    const secretName = realm.status?.credentialsSecret ?? '';
    const secret = await secretOf('tenant-a', secretName);
    assert.ok(secret !== null, `no Secret ${secretName}`);
    assert.equal(secret.data.realm, 'long-name');
    assert.equal(secret.json.metadata.labels?.['locus.dev/realm'], undefined);
    assert.equal((await putObject('long-name', 'a', secret.data.token ?? '')).status, 200);
  });

  void it("a JWT signed with the namespace's tenant key reaches every Realm of that namespace and none of another's", async () => {
    await applyRealm('tenant-a', 'trucks', {});
    await applyRealm('tenant-b', 'bravo', {});
    await Promise.all([ready('tenant-a', 'trucks'), ready('tenant-b', 'bravo')]);
    const a = await tenantKey('tenant-a');
    const b = await tenantKey('tenant-b');
    assert.notEqual(a.kid, b.kid);
    const tenantA = await jwt(a.kid, a.secret);
    const tenantB = await jwt(b.kid, b.secret);
    assert.equal((await getObject('fleet', 'a', tenantA)).status, 200);
    assert.equal((await putObject('trucks', 't', tenantA)).status, 200);
    // tenant-b's realm exists and holds x, but tenant-a's key does not reach it.
    assert.equal((await putObject('bravo', 'x', (await credentials('tenant-b', 'bravo')).token ?? '')).status, 200);
    assert.equal((await getObject('bravo', 'x', tenantB)).status, 200);
    const foreign = await getObject('bravo', 'x', tenantA);
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal((await getObject('fleet', 'a', tenantB)).status, 404);
    // A realm-bound key reaches its realm only.
    const fleet = await credentials('tenant-a', 'fleet');
    assert.equal((await getObject('trucks', 't', await jwt(fleet.keyId ?? '', fleet.signingKey ?? ''))).status, 403);
    // Credentials are stable across reconciles.
    await patchRealm('tenant-a', 'fleet', { metadata: { annotations: { 'example.com/touched': '1' } } });
    await sleep(1500);
    assert.deepEqual(await credentials('tenant-a', 'fleet'), fleet);
  });

  void it("editing the spec changes the realm's settings", async () => {
    const read = async (): Promise<{ historyRetentionDays: number; rateLimit: number | null }> => {
      const res = await call(apiUrl, 'GET', '/admin/v1/tenant/tenant-a/realm/fleet', { token: ADMIN });
      assert.equal(res.status, 200, res.text);
      return (res.json as { settings: { historyRetentionDays: number; rateLimit: number | null } }).settings;
    };
    assert.equal((await read()).historyRetentionDays, 7);
    await patchRealm('tenant-a', 'fleet', { spec: { settings: { historyRetentionDays: 90, rateLimitPerSecond: 50 } } });
    await ready('tenant-a', 'fleet');
    assert.deepEqual(await read(), { connectionTimeout: 120, historyRetentionDays: 90, rateLimit: 50 });
  });

  void it('rotating the tenant key keeps tokens of the old key valid for the grace period only', async () => {
    const old = await tenantKey('tenant-a');
    const oldJwt = await jwt(old.kid, old.secret);
    assert.equal((await getObject('fleet', 'a', oldJwt)).status, 200);
    await patchRealm('tenant-a', 'fleet', { metadata: { annotations: { 'locus.dev/rotate-tenant-key': 'first' } } });
    const rotated = await waitFor('a new tenant key', async () => {
      const now = await tenantKey('tenant-a');
      return now.kid !== old.kid ? now : null;
    }, 20_000, logs);
    const rotatedAt = Date.now();
    assert.match(rotated.annotations[RETIRED_KEYS_ANNOTATION] ?? '', new RegExp(old.kid));
    assert.equal((await getObject('fleet', 'a', await jwt(rotated.kid, rotated.secret))).status, 200);
    assert.equal((await getObject('fleet', 'a', oldJwt)).status, 200, 'the old key works during the grace period');
    await waitFor('the old key removed', async () => (await getObject('fleet', 'a', oldJwt)).status === 401, 30_000, logs);
    assert.ok(Date.now() - rotatedAt >= (GRACE_S - 1) * 1000, 'the old key was refused before its grace period ended');
    assert.equal((await getObject('fleet', 'a', await jwt(rotated.kid, rotated.secret))).status, 200);
    assert.equal((await tenantKey('tenant-a')).annotations[RETIRED_KEYS_ANNOTATION], '{}');
    // The same annotation value again does not rotate again.
    await patchRealm('tenant-a', 'trucks', { metadata: { annotations: { 'locus.dev/rotate-tenant-key': 'first' } } });
    await sleep(1500);
    assert.equal((await tenantKey('tenant-a')).kid, rotated.kid);
  });

  void it("rotation asked on the tenant key Secret's annotation happens within seconds (the Secret watch)", async (t) => {
    const old = await tenantKey('tenant-a');
    const asked = Date.now();
    const res = await kube.request('PATCH', '/api/v1/namespaces/tenant-a/secrets/locus-tenant-key', { metadata: { annotations: { 'locus.dev/rotate-tenant-key': 'via-secret' } } }, MERGE);
    assert.equal(res.status, 200, res.text);
    const rotated = await waitFor('a new tenant key', async () => {
      const now = await tenantKey('tenant-a');
      return now.kid !== old.kid ? now : null;
    }, 20_000, logs);
    const tookMs = Date.now() - asked;
    t.diagnostic(`rotation through the Secret's annotation: ${tookMs} ms`);
    assert.ok(tookMs <= SECRET_ACTION_MS, `took ${tookMs} ms`);
    assert.match(rotated.annotations['locus.dev/rotations-applied'] ?? '', /via-secret/);
    assert.equal((await getObject('fleet', 'a', await jwt(rotated.kid, rotated.secret))).status, 200);
  });

  void it('a deleted credentials Secret is back within seconds; the deleted credentials work for the grace period only, and the realm keeps one token', async (t) => {
    const old = await credentials('tenant-a', 'fleet');
    const oldJwt = await jwt(old.keyId ?? '', old.signingKey ?? '');
    assert.equal((await getObject('fleet', 'a', old.token ?? '')).status, 200);
    const deleted = Date.now();
    const res = await kube.request('DELETE', '/api/v1/namespaces/tenant-a/secrets/fleet-locus-credentials');
    assert.equal(res.status, 200, res.text);
    const fresh = await waitFor('the credentials Secret back', async () => {
      const secret = await secretOf('tenant-a', 'fleet-locus-credentials');
      return secret !== null && secret.data.token !== old.token ? secret.data : null;
    }, 20_000, logs);
    const backMs = Date.now() - deleted;
    t.diagnostic(`deleted credentials Secret back: ${backMs} ms`);
    assert.ok(backMs <= SECRET_ACTION_MS, `took ${backMs} ms`);
    assert.notEqual(fresh.keyId, old.keyId);
    assert.equal((await getObject('fleet', 'a', fresh.token ?? '')).status, 200);
    assert.equal((await getObject('fleet', 'a', await jwt(fresh.keyId ?? '', fresh.signingKey ?? ''))).status, 200);
    const realm = await ready('tenant-a', 'fleet');
    assert.deepEqual(realm.status?.credentials?.superseded?.map((c) => c.id).sort(), [old.tokenId, old.keyId].sort());
    // The deleted credentials: accepted during the grace period, refused after it.
    assert.equal((await getObject('fleet', 'a', old.token ?? '')).status, 200, 'the old token works during the grace period');
    assert.equal((await getObject('fleet', 'a', oldJwt)).status, 200, 'the old key works during the grace period');
    await waitFor('the old token refused', async () => (await getObject('fleet', 'a', old.token ?? '')).status === 401, 30_000, logs);
    const revokedMs = Date.now() - deleted;
    t.diagnostic(`superseded credentials refused ${revokedMs} ms after the deletion (grace ${CREDENTIALS_GRACE_S} s)`);
    assert.ok(revokedMs >= (CREDENTIALS_GRACE_S - 1) * 1000, 'refused before the grace period ended');
    assert.ok(revokedMs <= CREDENTIALS_GRACE_S * 1000 + SECRET_ACTION_MS, `refused only ${revokedMs} ms after`);
    await waitFor('the old key refused', async () => (await getObject('fleet', 'a', oldJwt)).status === 401, 10_000, logs);
    assert.equal((await getObject('fleet', 'a', fresh.token ?? '')).status, 200);
    const details = await call(apiUrl, 'GET', '/admin/v1/tenant/tenant-a/realm/fleet', { token: ADMIN });
    assert.equal(details.status, 200, details.text);
    assert.equal((details.json as { tokens: unknown[] }).tokens.length, 1, 'one token in the store, the one in the Secret');
    // The operator revokes first, then writes the status: the status may follow the refusal by a moment.
    await waitFor('no superseded credentials in the status', async () => ((await getRealm('tenant-a', 'fleet'))?.status?.credentials?.superseded?.length === 0 ? true : null), 10_000, logs);
  });

  void it('deleting a Realm with deletionPolicy Retain revokes its credentials and keeps its data for a re-created Realm', async () => {
    const creds = await credentials('tenant-a', 'fleet');
    const bound = await jwt(creds.keyId ?? '', creds.signingKey ?? '');
    const res = await kube.request('DELETE', `${realmsPath('tenant-a')}/fleet`);
    assert.equal(res.status, 200, res.text);
    await waitFor('the Realm gone', async () => (await getRealm('tenant-a', 'fleet')) === null, 30_000, logs);
    assert.equal((await getObject('fleet', 'a', creds.token ?? '')).status, 401);
    assert.equal((await getObject('fleet', 'a', bound)).status, 401);
    assert.equal(await secretOf('tenant-a', 'fleet-locus-credentials'), null);
    const key = await tenantKey('tenant-a');
    assert.equal((await getObject('fleet', 'a', await jwt(key.kid, key.secret))).status, 200, 'the data is retained');

    await applyRealm('tenant-a', 'fleet', { realmId: 'fleet' });
    await ready('tenant-a', 'fleet');
    const again = await credentials('tenant-a', 'fleet');
    assert.notEqual(again.token, creds.token);
    assert.equal((await getObject('fleet', 'a', again.token ?? '')).status, 200);
  });

  void it('deleting a Realm with deletionPolicy Delete drops its data', async () => {
    await patchRealm('tenant-a', 'trucks', { spec: { deletionPolicy: 'Delete' } });
    await ready('tenant-a', 'trucks');
    const key = await tenantKey('tenant-a');
    const tenantJwt = await jwt(key.kid, key.secret);
    assert.equal((await getObject('trucks', 't', tenantJwt)).status, 200);
    const token = (await credentials('tenant-a', 'trucks')).token ?? '';
    assert.equal((await kube.request('DELETE', `${realmsPath('tenant-a')}/trucks`)).status, 200);
    await waitFor('the Realm gone', async () => (await getRealm('tenant-a', 'trucks')) === null, 30_000, logs);
    assert.equal((await getObject('trucks', 't', token)).status, 401);
    const gone = await getObject('trucks', 't', tenantJwt);
    assert.equal(gone.status, 404, gone.text);
    assert.match(gone.text, /unknown realm/);
    await applyRealm('tenant-a', 'trucks', {});
    await ready('tenant-a', 'trucks');
    assert.equal((await getObject('trucks', 't', tenantJwt)).status, 404);
  });

  void it('an operator killed (SIGKILL) mid-reconcile converges after a restart', async () => {
    // Killed at two points of a first reconcile: once the finalizer shows (nothing provisioned
    // yet), and once the credentials Secret shows (the store may or may not hold its token).
    const points: [string, (realm: string) => Promise<boolean>][] = [
      ['the finalizer added', async (name) => (await getRealm('tenant-b', name))?.metadata.finalizers?.includes(FINALIZER) === true],
      ['the credentials Secret written', async (name) => (await secretOf('tenant-b', `${name}-locus-credentials`)) !== null],
    ];
    let n = 0;
    for (const [point, reached] of points) {
      const name = `crash-${++n}`;
      await applyRealm('tenant-b', name, { settings: { historyRetentionDays: 3 } });
      await waitFor(point, () => reached(name), 30_000, logs);
      await operator.stop('SIGKILL');
      operator = await startOperator(`operator-a${n + 1}`);
      await ready('tenant-b', name);
      const creds = await credentials('tenant-b', name);
      assert.equal((await putObject(name, 'c', creds.token ?? '')).status, 200);
      assert.equal((await getObject(name, 'c', await jwt(creds.keyId ?? '', creds.signingKey ?? ''))).status, 200);
      const details = await call(apiUrl, 'GET', `/admin/v1/tenant/tenant-b/realm/${name}`, { token: ADMIN });
      assert.equal(details.status, 200, details.text);
      const body = details.json as { settings: { historyRetentionDays: number }; tokens: unknown[] };
      assert.equal(body.settings.historyRetentionDays, 3);
      assert.equal(body.tokens.length, 1, 'one token in the store, the one in the Secret');
    }
  });

  void it('of two replicas exactly one leads; the other takes over at once on SIGTERM and within the lease duration on SIGKILL', async () => {
    await waitFor('the restarted operator leading', async () => (await leaseHolder()) === operator.identity && (await operator.metric('locus_operator_leader')) === 1, 20_000, logs);
    const second = await startOperator('operator-b');
    await waitFor('operator-b ready', async () => (await second.get('/readyz')).status === 200, 20_000, logs);
    await sleep(LEASE.retry * 3000);
    assert.equal(await leaseHolder(), operator.identity);
    assert.equal(await operator.metric('locus_operator_leader'), 1);
    assert.equal(await second.metric('locus_operator_leader'), 0);

    // SIGTERM: the leader releases the Lease; the other takes it at its next try.
    let since = Date.now();
    await operator.stop('SIGTERM');
    assert.equal((await operator.exited).code, 0, operator.output());
    await waitFor('operator-b leading', async () => (await leaseHolder()) === 'operator-b' && (await second.metric('locus_operator_leader')) === 1, 20_000, logs);
    const handover = Date.now() - since;
    assert.ok(handover < LEASE.duration * 1000, `took ${handover} ms after SIGTERM`);
    await applyRealm('tenant-b', 'after-handover', {});
    await ready('tenant-b', 'after-handover');

    // SIGKILL: no release; the standby takes over once the Lease expires.
    const third = await startOperator('operator-c');
    await waitFor('operator-c ready', async () => (await third.get('/readyz')).status === 200, 20_000, logs);
    assert.equal(await third.metric('locus_operator_leader'), 0);
    since = Date.now();
    await second.stop('SIGKILL');
    await waitFor('operator-c leading', async () => (await leaseHolder()) === 'operator-c', 20_000, logs);
    const takeover = Date.now() - since;
    // Expiry is measured from the last renewal (≤ one retry period before the kill), checked every retry period.
    assert.ok(takeover <= (LEASE.duration + LEASE.retry) * 1000 + 500, `took ${takeover} ms after SIGKILL`);
    await applyRealm('tenant-b', 'after-takeover', {});
    await ready('tenant-b', 'after-takeover');
    const metrics = await third.get('/metrics');
    assert.match(metrics.text, /locus_operator_reconciles_total\{result="success"\} [1-9]/);
    assert.match(metrics.text, /locus_operator_reconcile_duration_seconds_count [1-9]/);
    assert.match(metrics.text, /locus_operator_queue_depth 0/);
    const check = spawnSync(findPromtool(), ['check', 'metrics'], { input: metrics.text, encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`);
    // Nothing the operators did was refused by RBAC (Events included, which are best effort).
    assert.doesNotMatch(logs(), /HTTP 403/);
  });

  void it("outside a cluster the Lease namespace is the kubeconfig context's; without rights on its Lease an operator is not ready and says why, once", async () => {
    const withContextNamespace = (namespace: string): string => {
      const config = parseYaml(readFileSync(kubeconfig, 'utf8')) as { contexts: { context: Record<string, string> }[] };
      for (const context of config.contexts) context.context.namespace = namespace;
      const path = join(dir, `operator-${namespace}.kubeconfig`);
      writeFileSync(path, toYaml(config), { mode: 0o600 });
      return path;
    };
    const envWithout = (path: string): Record<string, string> => {
      const env: Record<string, string> = { ...operatorEnv(), KUBECONFIG: path };
      delete env.LOCUS_OPERATOR_LEASE_NAMESPACE;
      return env;
    };
    // The release namespace as the context's: it follows the leader, and is ready.
    const follower = await startOperatorProcess('operator-context', envWithout(withContextNamespace(LEASE_NS)));
    operators.push(follower);
    await waitFor('operator-context ready', async () => (await follower.get('/readyz')).status === 200, 20_000, logs);
    assert.match(follower.output(), new RegExp(`"lease":"${LEASE_NS}/locus-operator","leaseNamespaceFrom":"the Kubernetes context's namespace"`));

    // A namespace where the chart grants no Lease rights: never ready, the reason in /readyz and in the log, once.
    const denied = await startOperatorProcess('operator-denied', envWithout(withContextNamespace('tenant-a')));
    operators.push(denied);
    const readyz = await waitFor('operator-denied answering /readyz', async () => {
      const res = await denied.get('/readyz');
      return /Lease/.test(res.text) ? res : null;
    }, 20_000, logs);
    assert.equal(readyz.status, 503);
    assert.match(readyz.text, /neither leading nor following: reading Lease tenant-a\/locus-operator: HTTP 403/);
    assert.match(readyz.text, /needs get, create and update on leases.coordination.k8s.io in namespace tenant-a/);
    await sleep(LEASE.retry * 4000);
    assert.equal((await denied.get('/readyz')).status, 503);
    assert.equal(await denied.metric('locus_operator_leader'), 0);
    const warnings = denied.output().split('\n').filter((line) => line.includes('the Lease could not be read or written'));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0] ?? '', /"lease":"tenant-a\/locus-operator"/);
    await denied.stop('SIGTERM');
    await follower.stop('SIGTERM');
  });
});
