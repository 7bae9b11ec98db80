/**
 * crds/realms.locus.dev.yaml against the real kube-apiserver: the file itself applies (sent as
 * YAML, also as a server-side dry run that stores nothing), the Realm API it defines validates
 * with the expected messages (realm id pattern and length, deletionPolicy, settings bounds,
 * unknown fields, the CEL rule that keeps spec.realmId immutable, the CEL rules across status
 * fields of a Ready Realm), defaults deletionPolicy,
 * serves the status subresource, short name and printer columns, and server-side dry run of
 * Realms works. deploy/realm-example.yaml validates too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { READY_NEEDS_CONDITION_MESSAGE, READY_NEEDS_SECRET_MESSAGE, REALM_ID_IMMUTABLE_MESSAGE } from '../../internal/kube/realm-crd.js';
import { startKubeApiServer, type KubeApiServer, type KubeResponse } from '../support/kube-apiserver.js';

const crdYaml = readFileSync(new URL('../../../crds/realms.locus.dev.yaml', import.meta.url), 'utf8');
const exampleYaml = readFileSync(new URL('../../../deploy/realm-example.yaml', import.meta.url), 'utf8');
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS = 'tenant-a';
const REALMS = `/apis/locus.dev/v1alpha1/namespaces/${NS}/realms`;
const YAML = { 'content-type': 'application/yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

function realm(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name }, spec };
}

function message(response: KubeResponse): string {
  return (response.body as { message?: string }).message ?? response.text;
}

/** Asserts a 422 whose message matches every pattern. */
function rejected(response: KubeResponse, ...patterns: RegExp[]): void {
  assert.equal(response.status, 422, response.text);
  for (const pattern of patterns) assert.match(message(response), pattern);
}

void describe('Realm CRD on a real kube-apiserver', () => {
  let server: KubeApiServer;

  before(async () => {
    server = await startKubeApiServer();
    const ns = await server.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    assert.equal(ns.status, 201, ns.text);
  });

  after(async () => {
    await server?.stop();
  });

  void it('the CRD file passes a server-side dry run, which stores nothing', async () => {
    const dry = await server.request('POST', `${CRDS}?dryRun=All&fieldValidation=Strict`, crdYaml, YAML);
    assert.equal(dry.status, 201, dry.text);
    assert.equal((await server.request('GET', `${CRDS}/realms.locus.dev`)).status, 404);
  });

  void it('the CRD file applies (strict field validation) and becomes Established', async () => {
    const created = await server.request('POST', `${CRDS}?fieldValidation=Strict`, crdYaml, YAML);
    assert.equal(created.status, 201, created.text);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const crd = await server.request('GET', `${CRDS}/realms.locus.dev`);
      const conditions = (crd.body as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      assert.ok(Date.now() < deadline, `the CRD is not Established: ${crd.text}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Discovery serves the short name and category (what kubectl get rlm uses).
    const discovery = await server.request('GET', '/apis/locus.dev/v1alpha1');
    const resource = (discovery.body as { resources: { name: string; shortNames?: string[]; categories?: string[]; namespaced: boolean }[] }).resources.find(
      (r) => r.name === 'realms',
    );
    assert.deepEqual(resource?.shortNames, ['rlm']);
    assert.deepEqual(resource?.categories, ['locus']);
    assert.equal(resource?.namespaced, true);
  });

  void it('accepts a valid Realm and defaults deletionPolicy to Retain', async () => {
    const created = await server.request('POST', REALMS, realm('fleet', { realmId: 'fleet-1', label: 'Fleet', settings: { historyRetentionDays: 0, connectionTimeoutSeconds: 31_536_000, rateLimitPerSecond: 1 } }));
    assert.equal(created.status, 201, created.text);
    const body = created.body as { spec: Record<string, unknown>; metadata: { generation: number } };
    assert.equal(body.spec.deletionPolicy, 'Retain');
    assert.deepEqual(body.spec.settings, { historyRetentionDays: 0, connectionTimeoutSeconds: 31_536_000, rateLimitPerSecond: 1 });
    assert.equal(body.metadata.generation, 1);
  });

  void it('accepts deploy/realm-example.yaml (dry run)', async () => {
    const dry = await server.request('POST', `${REALMS}?dryRun=All&fieldValidation=Strict`, exampleYaml, YAML);
    assert.equal(dry.status, 201, dry.text);
  });

  void it('rejects a realm id outside the pattern or too long', async () => {
    rejected(await server.request('POST', REALMS, realm('bad-id', { realmId: 'bad id!' })), /spec\.realmId: Invalid value: "bad id!"/, /should match/);
    rejected(await server.request('POST', REALMS, realm('dash', { realmId: '-a' })), /spec\.realmId/, /should match/);
    rejected(await server.request('POST', REALMS, realm('long-id', { realmId: 'a'.repeat(254) })), /spec\.realmId: Too long: may not be (more|longer) than 253/);
    rejected(await server.request('POST', REALMS, realm('empty-id', { realmId: '' })), /spec\.realmId/);
  });

  void it('rejects a deletionPolicy other than Retain or Delete', async () => {
    rejected(
      await server.request('POST', REALMS, realm('bad-policy', { deletionPolicy: 'Destroy' })),
      /spec\.deletionPolicy: Unsupported value: "Destroy": supported values: "Retain", "Delete"/,
    );
  });

  void it('rejects settings out of bounds, naming each field', async () => {
    const response = await server.request('POST', REALMS, realm('bad-settings', { settings: { historyRetentionDays: 36_501, connectionTimeoutSeconds: 0, rateLimitPerSecond: 0 } }));
    rejected(
      response,
      /spec\.settings\.historyRetentionDays: Invalid value: 36501: spec\.settings\.historyRetentionDays in body should be less than or equal to 36500/,
      /spec\.settings\.connectionTimeoutSeconds: Invalid value: 0: spec\.settings\.connectionTimeoutSeconds in body should be greater than or equal to 1/,
      /spec\.settings\.rateLimitPerSecond: Invalid value: 0: .*greater than or equal to 1/,
    );
    rejected(await server.request('POST', REALMS, realm('frac', { settings: { historyRetentionDays: 1.5 } })), /spec\.settings\.historyRetentionDays/);
  });

  void it('rejects unknown fields under strict field validation', async () => {
    const response = await server.request('POST', `${REALMS}?fieldValidation=Strict`, realm('unknown', { realmId: 'x', replicas: 3 }));
    assert.equal(response.status, 400, response.text);
    assert.match(message(response), /unknown field "spec\.replicas"/);
  });

  void it('keeps spec.realmId immutable through the CEL rule, and allows other edits', async () => {
    const path = `${REALMS}/fleet`;
    rejected(await server.request('PATCH', path, { spec: { realmId: 'fleet-2' } }, MERGE), new RegExp(REALM_ID_IMMUTABLE_MESSAGE.replace(/[.]/g, '\\.')));
    rejected(await server.request('PATCH', path, { spec: { realmId: null } }, MERGE), /spec\.realmId is immutable/);
    const edited = await server.request('PATCH', path, { spec: { label: 'Fleet, renamed', deletionPolicy: 'Delete' } }, MERGE);
    assert.equal(edited.status, 200, edited.text);
    assert.equal((edited.body as { metadata: { generation: number } }).metadata.generation, 2);
    // A Realm named by metadata.name cannot gain a realmId later either.
    assert.equal((await server.request('POST', REALMS, realm('by-name', {}))).status, 201);
    rejected(await server.request('PATCH', `${REALMS}/by-name`, { spec: { realmId: 'other' } }, MERGE), /spec\.realmId is immutable/);
  });

  void it('serves the status subresource, validated, separate from the spec', async () => {
    const path = `${REALMS}/fleet`;
    const status = { phase: 'Ready', observedGeneration: 2, realmId: 'fleet-1', credentialsSecret: 'fleet-credentials', conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    const written = await server.request('PATCH', `${path}/status`, { status, spec: { label: 'ignored' } }, MERGE);
    assert.equal(written.status, 200, written.text);
    const body = written.body as { status: unknown; spec: { label: string }; metadata: { generation: number } };
    assert.deepEqual(body.status, status);
    assert.equal(body.spec.label, 'Fleet, renamed', 'the status endpoint leaves the spec alone');
    assert.equal(body.metadata.generation, 2, 'a status write does not bump the generation');
    rejected(await server.request('PATCH', `${path}/status`, { status: { phase: 'Bogus' } }, MERGE), /status\.phase: Unsupported value: "Bogus"/);
    // The CEL rules across status fields: Ready needs the realm id, the Secret and a Ready=True condition.
    const literal = (text: string): RegExp => new RegExp(text.replace(/[.]/g, '\\.'));
    const other = `${REALMS}/by-name`;
    rejected(await server.request('PATCH', `${other}/status`, { status: { phase: 'Ready', realmId: 'by-name', conditions: status.conditions } }, MERGE), literal(READY_NEEDS_SECRET_MESSAGE));
    rejected(
      await server.request('PATCH', `${other}/status`, { status: { phase: 'Ready', realmId: 'by-name', credentialsSecret: 's', conditions: [{ ...status.conditions[0], status: 'False' }] } }, MERGE),
      literal(READY_NEEDS_CONDITION_MESSAGE),
    );
    const provisioning = await server.request('PATCH', `${other}/status`, { status: { phase: 'Provisioning' } }, MERGE);
    assert.equal(provisioning.status, 200, provisioning.text);
    // The main endpoint ignores status.
    const main = await server.request('PATCH', path, { status: { phase: 'Deleting' } }, MERGE);
    assert.equal((main.body as { status: { phase: string } }).status.phase, 'Ready');
  });

  void it('prints the columns the CRD declares', async () => {
    const table = await server.request('GET', REALMS, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(table.status, 200, table.text);
    const body = table.body as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    assert.deepEqual(body.columnDefinitions.map((c) => c.name), ['Name', 'Realm ID', 'Phase', 'Ready', 'Deletion', 'Age']);
    const fleet = body.rows.find((row) => row.cells[0] === 'fleet');
    assert.deepEqual(fleet?.cells.slice(0, 5), ['fleet', 'fleet-1', 'Ready', 'True', 'Delete']);
  });

  void it('runs a server-side dry run of a Realm: validated, defaulted, not stored', async () => {
    const dry = await server.request('POST', `${REALMS}?dryRun=All`, realm('dry', { realmId: 'dry' }));
    assert.equal(dry.status, 201, dry.text);
    assert.equal((dry.body as { spec: { deletionPolicy: string } }).spec.deletionPolicy, 'Retain');
    assert.equal((await server.request('GET', `${REALMS}/dry`)).status, 404);
    rejected(await server.request('POST', `${REALMS}?dryRun=All`, realm('dry', { realmId: 'dry!' })), /spec\.realmId/);
    const dryPatch = await server.request('PATCH', `${REALMS}/fleet?dryRun=All`, { spec: { realmId: 'moved' } }, MERGE);
    rejected(dryPatch, /spec\.realmId is immutable/);
  });
});
