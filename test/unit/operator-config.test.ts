/** The operator's configuration (internal/operator/operator-config.ts): defaults and clear refusals. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../internal/config/config.js';
import { leaseNamespaceFor, loadOperatorConfig } from '../../internal/operator/operator-config.js';

void describe('operator configuration', () => {
  void it('defaults: the chart-facing values and client-go lease timings', () => {
    const config = loadOperatorConfig({ LOCUS_OPERATOR_IDENTITY: 'pod-1' });
    assert.equal(config.port, 8081);
    assert.deepEqual(config.namespaces, []);
    assert.equal(config.identity, 'pod-1');
    assert.deepEqual([config.leaseDurationS, config.renewDeadlineS, config.retryPeriodS], [15, 10, 2]);
    assert.equal(config.keyGraceMs, 86_400_000);
    assert.equal(config.credentialsGraceMs, 3_600_000);
    assert.equal(config.leaseNamespace, null, 'from the Kubernetes connection');
    assert.equal(config.leaseName, 'locus-operator');
  });

  void it('reads the namespace list, trimmed and without duplicates', () => {
    assert.deepEqual(loadOperatorConfig({ LOCUS_OPERATOR_NAMESPACES: ' a, b ,,a' }).namespaces, ['a', 'b']);
  });

  void it('refuses bad values, naming the variable', () => {
    const refused = (env: NodeJS.ProcessEnv, pattern: RegExp): void => {
      assert.throws(() => loadOperatorConfig(env), (err: unknown) => err instanceof ConfigError && pattern.test(err.message));
    };
    refused({ LOCUS_OPERATOR_PORT: 'x' }, /LOCUS_OPERATOR_PORT must be a non-negative integer/);
    refused({ LOCUS_OPERATOR_PORT: '70000' }, /LOCUS_OPERATOR_PORT must be a port number/);
    refused({ LOCUS_OPERATOR_NAMESPACES: 'Bad_NS' }, /LOCUS_OPERATOR_NAMESPACES: "Bad_NS" is not a namespace name/);
    refused({ LOCUS_OPERATOR_LEASE_NAMESPACE: '-x' }, /LOCUS_OPERATOR_LEASE_NAMESPACE/);
    refused({ LOCUS_OPERATOR_WORKERS: '0' }, /LOCUS_OPERATOR_WORKERS must be at least 1/);
    refused({ LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS: '20' }, /LOCUS_OPERATOR_LEASE_DURATION_SECONDS \(15\) must exceed/);
    refused({ LOCUS_OPERATOR_BACKOFF_CAP_MS: '10' }, /LOCUS_OPERATOR_BACKOFF_CAP_MS/);
    refused({ LOCUS_LOG_LEVEL: 'loud' }, /LOCUS_LOG_LEVEL/);
    refused({ LOCUS_STORE: 'postgres://x' }, /postgres/);
    refused({ LOCUS_BUS: 'kafka://x' }, /LOCUS_BUS/);
  });

  void it("the Lease namespace: the variable, else the connection's context namespace (a Pod's own), else default", () => {
    assert.deepEqual(leaseNamespaceFor(loadOperatorConfig({ LOCUS_OPERATOR_LEASE_NAMESPACE: ' ops ' }).leaseNamespace, 'locus-system'), { namespace: 'ops', from: 'LOCUS_OPERATOR_LEASE_NAMESPACE' });
    assert.deepEqual(leaseNamespaceFor(null, 'locus-system'), { namespace: 'locus-system', from: "the Kubernetes context's namespace" });
    assert.deepEqual(leaseNamespaceFor(null, 'locus-system\n'), { namespace: 'locus-system', from: "the Kubernetes context's namespace" }, 'a namespace file with a newline');
    assert.deepEqual(leaseNamespaceFor(null, undefined), { namespace: 'default', from: 'the default' });
    assert.deepEqual(leaseNamespaceFor(null, ''), { namespace: 'default', from: 'the default' });
    assert.throws(() => leaseNamespaceFor(null, 'Not_A_Namespace'), (err: unknown) => err instanceof ConfigError && /context's namespace/.test(err.message));
  });
});
