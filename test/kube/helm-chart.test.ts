/**
 * The Helm chart charts/locus with the real helm (built by scripts/install-k8s-tools.sh): lint
 * and render it for the default values and every example values file, hold the rendered
 * manifests to what the chart promises (non-root, probes, least privilege, the settings that
 * reach the pods), check that values.schema.json rejects bad values, and apply every rendered
 * manifest and the CRDs to a real kube-apiserver with a server-side dry run under strict field
 * validation, so that the API server's own schemas (and the Prometheus Operator's CRDs, generated
 * from its published types) validate them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { toolsDir } from '../../internal/cluster/tools.js';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-apiserver.js';
import { toolPath } from '../support/tools.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const chart = join(root, 'charts/locus');
const KUBE_VERSION = '1.34.4';
const MONITORING_CRDS = join(toolsDir(), 'crds/monitoring.coreos.com/v0.95.2');
const examples = readdirSync(join(chart, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => join(chart, 'examples', f));
/** The default values, every example, and the values of the GitHub workflow's kind job. */
const valueSets: readonly (string | null)[] = [null, ...examples, join(root, 'test/e2e/kind/values.yaml')];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked field by field
  spec?: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are checked field by field
  [key: string]: any;
}

function helm(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(toolPath('helm'), args, { cwd: root, encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: join(toolsDir(), 'helm-cache') } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function render(values: string | null, extra: readonly string[] = []): Manifest[] {
  const out = helm(['template', 'locus', chart, '--namespace', 'locus-system', '--kube-version', KUBE_VERSION, '--include-crds', ...(values === null ? [] : ['-f', values]), ...extra]);
  assert.equal(out.status, 0, out.stderr);
  return parseAllDocuments(out.stdout)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

const byKind = (manifests: readonly Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (manifests: readonly Manifest[], kind: string, name: string): Manifest => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  assert.ok(found, `no ${kind} ${name} among ${manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
  return found;
};

void describe('Helm chart charts/locus', () => {
  void it('lints clean for the default values and every example values file', () => {
    for (const values of valueSets) {
      const out = helm(['lint', chart, '--strict', ...(values === null ? [] : ['-f', values])]);
      assert.equal(out.status, 0, `${values ?? 'default values'}: ${out.stdout}${out.stderr}`);
      assert.match(out.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  void it("renders without --kube-version: the project's helm assumes a current Kubernetes, as a released helm does", () => {
    // A helm built without the release build's flags assumes Kubernetes v1.20.0 and refuses the chart's kubeVersion (>=1.30).
    const out = helm(['template', 'locus', chart, '--namespace', 'locus-system']);
    assert.equal(out.status, 0, out.stderr);
    const kinds = parseAllDocuments(out.stdout).map((doc) => (doc.toJS() as Manifest | null)?.kind);
    assert.ok(kinds.includes('Deployment'), kinds.join(', '));
  });

  void it('renders API pods that run as non-root with probes, resources and the store and bus from Secrets', () => {
    const manifests = render(null);
    const api = one(manifests, 'Deployment', 'locus-api');
    const pod = api.spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.automountServiceAccountToken, false);
    const [container] = pod.containers;
    assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.ok(container.resources.requests.cpu);
    const entries = container.env as { name: string; value?: string; valueFrom?: unknown }[];
    const env = new Map<string, unknown>(entries.map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.deepEqual(env.get('LOCUS_STORE'), { secretKeyRef: { name: 'locus-mongodb', key: 'uri' } });
    assert.equal(env.get('LOCUS_BUS'), 'nats://nats:4222');
    assert.equal(env.get('LOCUS_METRICS'), 'true');
    // Each pod holds instruction leases under its own name.
    assert.deepEqual(env.get('LOCUS_PROCESS_ID'), { fieldRef: { fieldPath: 'metadata.name' } });
    assert.equal(env.has('LOCUS_ADMIN_TOKEN'), false);
    assert.equal(env.has('OTEL_EXPORTER_OTLP_ENDPOINT'), false, 'tracing is off unless an endpoint is given');
    // The HPA owns the replica count; a PDB keeps all but one pod through voluntary disruptions.
    assert.equal(api.spec.replicas, undefined);
    assert.equal(one(manifests, 'HorizontalPodAutoscaler', 'locus-api').spec.minReplicas, 3);
    assert.equal(one(manifests, 'PodDisruptionBudget', 'locus-api').spec.maxUnavailable, 1);
    assert.equal(one(manifests, 'Service', 'locus-tcp').spec.type, 'LoadBalancer');
    assert.equal(one(manifests, 'Service', 'locus-http').spec.type, 'ClusterIP');
    assert.equal(byKind(manifests, 'CustomResourceDefinition')[0]?.metadata.name, 'realms.locus.dev');
    assert.deepEqual(
      byKind(manifests, 'ServiceMonitor').concat(byKind(manifests, 'PrometheusRule'), byKind(manifests, 'NetworkPolicy')),
      [],
      'monitoring and network policies are opt-in',
    );
  });

  void it('gives the operator only what reconciling Realms takes', () => {
    const manifests = render(null);
    const role = one(manifests, 'ClusterRole', 'locus-operator');
    const verbs = new Map<string, string[]>();
    for (const rule of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
      for (const resource of rule.resources) verbs.set(`${rule.apiGroups.join(',')}/${resource}`, rule.verbs);
    }
    assert.deepEqual([...verbs.keys()].sort(), ['/secrets', ',events.k8s.io/events', 'locus.dev/realms', 'locus.dev/realms/finalizers', 'locus.dev/realms/status'].sort());
    assert.ok(!(verbs.get('locus.dev/realms') ?? []).includes('delete'), 'the operator never deletes Realms');
    for (const rule of role.rules as { verbs: string[]; resources: string[] }[]) assert.ok(!rule.verbs.includes('*') && !rule.resources.includes('*'));
    // Leases only in the release's namespace.
    assert.deepEqual(one(manifests, 'Role', 'locus-operator-leader').rules, [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }]);
    const operator = one(manifests, 'Deployment', 'locus-operator');
    assert.equal(operator.spec.replicas, 2);
    assert.deepEqual(operator.spec.template.spec.containers[0].args, ['dist/cmd/operator.js']);
  });

  void it('the production example turns on monitoring from deploy/ (the same rules and dashboards), tracing and network policies', () => {
    const manifests = render(join(chart, 'examples/production.yaml'));
    const rule = one(manifests, 'PrometheusRule', 'locus');
    const source = parseAllDocuments(readFileSync(join(root, 'deploy/prometheus/locus-alerts.yaml'), 'utf8'))[0]?.toJS() as { groups: unknown[] };
    assert.deepEqual(rule.spec.groups, source.groups);
    const dashboards = byKind(manifests, 'ConfigMap').filter((m) => m.metadata.labels?.grafana_dashboard === '1');
    assert.deepEqual(dashboards.map((d) => Object.keys(d.data as object)[0]).sort(), readdirSync(join(root, 'deploy/grafana')).filter((f) => f.endsWith('.json')).sort());
    for (const d of dashboards) {
      const [file, text] = Object.entries(d.data as Record<string, string>)[0] as [string, string];
      assert.deepEqual(JSON.parse(text), JSON.parse(readFileSync(join(root, 'deploy/grafana', file), 'utf8')));
    }
    assert.equal(byKind(manifests, 'ServiceMonitor').length, 1);
    assert.equal(byKind(manifests, 'NetworkPolicy').length, 2);
    const env = one(manifests, 'Deployment', 'locus-api').spec.template.spec.containers[0].env as { name: string; value?: string }[];
    assert.equal(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_ENDPOINT')?.value, 'http://otel-collector.observability:4318');
  });

  void it('the namespaced example scopes the operator to Roles in its namespaces', () => {
    const manifests = render(join(chart, 'examples/namespaced.yaml'));
    assert.deepEqual(byKind(manifests, 'ClusterRole'), []);
    assert.deepEqual(
      byKind(manifests, 'Role')
        .filter((r) => r.metadata.name === 'locus-operator')
        .map((r) => r.metadata.namespace)
        .sort(),
      ['team-a', 'team-b'],
    );
    assert.equal(one(manifests, 'Deployment', 'locus-api').spec.replicas, 2);
  });

  void it('metrics.prometheusRule.runbookUrl makes every runbook_url an address of docs/operations.md, anchor kept', () => {
    const base = 'https://git.example.com/locus/blob/main/docs/operations.md';
    const manifests = render(null, ['--set', 'metrics.prometheusRule.enabled=true', '--set', `metrics.prometheusRule.runbookUrl=${base}`]);
    const source = parseAllDocuments(readFileSync(join(root, 'deploy/prometheus/locus-alerts.yaml'), 'utf8'))[0]?.toJS() as { groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[] };
    const rendered = one(manifests, 'PrometheusRule', 'locus').spec.groups as typeof source.groups;
    const alerts = (groups: typeof source.groups): { alert?: string; annotations?: Record<string, string> }[] => groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    const expected = alerts(source.groups).map((r) => ({ ...r, annotations: { ...r.annotations, runbook_url: (r.annotations?.runbook_url ?? '').replace('docs/operations.md#', `${base}#`) } }));
    assert.ok(expected.length >= 10 && expected.every((r) => r.annotations.runbook_url.startsWith(`${base}#locus`)));
    assert.deepEqual(alerts(rendered), expected);
  });

  void it('values.schema.json rejects bad values with a message naming them', () => {
    for (const [set, pattern] of [
      ['api.replicas=0', /api\.replicas|replicas/],
      ['service.tcp.type=Magic', /service\.tcp\.type|type/],
      ['tracing.samplerArg=2', /samplerArg/],
      ['unknownKey=1', /unknownKey|additional/i],
      ['metrics.prometheusRule.runbookUrl=docs/ops.md#x', /runbookUrl/],
    ] as const) {
      const out = helm(['template', 'locus', chart, '--kube-version', KUBE_VERSION, '--set', set]);
      assert.notEqual(out.status, 0, `--set ${set} rendered`);
      assert.match(out.stderr, /values don't meet the specifications of the schema/);
      assert.match(out.stderr, pattern);
    }
  });

  void describe('on a real kube-apiserver (server-side dry run, strict field validation)', () => {
    let server: KubeApiServer;
    /** kind -> { path of its collection, namespaced } from discovery. */
    const resources = new Map<string, { group: string; plural: string; namespaced: boolean }>();

    async function discover(): Promise<void> {
      const groups = (await server.request('GET', '/apis')).body as { groups: { preferredVersion: { groupVersion: string } }[] };
      const versions = ['v1', ...groups.groups.map((g) => g.preferredVersion.groupVersion)];
      for (const gv of versions) {
        const list = await server.request('GET', gv === 'v1' ? '/api/v1' : `/apis/${gv}`);
        for (const r of (list.body as { resources: { name: string; kind: string; namespaced: boolean }[] }).resources) {
          if (!r.name.includes('/')) resources.set(`${gv}/${r.kind}`, { group: gv, plural: r.name, namespaced: r.namespaced });
        }
      }
    }

    async function apply(manifest: Manifest, dryRun: boolean): Promise<void> {
      const resource = resources.get(`${manifest.apiVersion}/${manifest.kind}`);
      assert.ok(resource, `the API server serves no ${manifest.apiVersion} ${manifest.kind}`);
      const base = resource.group === 'v1' ? '/api/v1' : `/apis/${resource.group}`;
      const namespace = manifest.metadata.namespace ?? 'locus-system';
      const path = `${base}${resource.namespaced ? `/namespaces/${namespace}` : ''}/${resource.plural}?fieldValidation=Strict${dryRun ? '&dryRun=All' : ''}`;
      const response = await server.request('POST', path, manifest);
      assert.equal(response.status, 201, `${manifest.kind} ${manifest.metadata.name}: ${response.text}`);
    }

    async function established(name: string): Promise<void> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const crd = await server.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        const conditions = (crd.body as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
        if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
        assert.ok(Date.now() < deadline, `${name} is not Established`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    before(async () => {
      server = await startKubeApiServer();
      for (const ns of ['locus-system', 'team-a', 'team-b']) {
        const created = await server.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
        assert.equal(created.status, 201, created.text);
      }
      // The Prometheus Operator's CRDs, which a cluster with monitoring has installed.
      for (const file of ['monitoring.coreos.com_servicemonitors.yaml', 'monitoring.coreos.com_prometheusrules.yaml']) {
        const crd = parseAllDocuments(readFileSync(join(MONITORING_CRDS, file), 'utf8'))[0]?.toJS() as Manifest;
        const created = await server.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
        assert.equal(created.status, 201, created.text);
        await established(crd.metadata.name);
      }
      await discover();
    });

    after(async () => {
      await server?.stop();
    });

    void it('every manifest of every values set is accepted, the chart CRD first', async () => {
      // The chart's CRD for real (a release installs crds/ before the templates), then the rest dry.
      const first = render(null);
      for (const crd of byKind(first, 'CustomResourceDefinition')) {
        await apply(crd, false);
        await established(crd.metadata.name);
      }
      await discover();
      let checked = 0;
      for (const values of valueSets) {
        for (const manifest of render(values)) {
          if (manifest.kind === 'CustomResourceDefinition') continue;
          await apply(manifest, true);
          checked++;
        }
      }
      assert.ok(checked >= 40, `only ${checked} manifests checked`);
      // The example Realm, in a tenant namespace.
      const realm = parseAllDocuments(readFileSync(join(root, 'deploy/realm-example.yaml'), 'utf8'))[0]?.toJS() as Manifest;
      await apply({ ...realm, metadata: { ...realm.metadata, namespace: 'team-a' } }, true);
    });

    void it('a manifest the API server would refuse is refused (the dry run checks)', async () => {
      const api = one(render(null), 'Deployment', 'locus-api');
      const broken = structuredClone(api);
      broken.spec.template.spec.containers[0].securityContext.runAsUserName = 'x';
      const resource = resources.get('apps/v1/Deployment');
      assert.ok(resource);
      const response = await server.request('POST', '/apis/apps/v1/namespaces/locus-system/deployments?fieldValidation=Strict&dryRun=All', broken);
      assert.equal(response.status, 400, response.text);
      assert.match(response.text, /unknown field .*runAsUserName/);
    });
  });
});
