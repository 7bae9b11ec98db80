/**
 * The operator process (`node dist/cmd/operator.js`) without a reachable API server: a bad
 * setting stops it with a message naming the variable; with an API server that does not answer
 * it stays up, /healthz answers, /readyz says why it is not ready, /metrics shows it not leading,
 * and SIGTERM ends it cleanly. The rest of its behaviour: test/kube/operator.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { toYaml } from '../../internal/kube/yaml.js';
import { freePort } from '../support/kube-apiserver.js';
import { startOperatorProcess } from '../support/operator-process.js';

const operatorScript = fileURLToPath(new URL('../../cmd/operator.js', import.meta.url));

void describe('the operator process without a reachable API server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'locus-operator-proc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  void it('refuses a bad setting with a message naming it, exit code 1', async () => {
    const child = spawn(process.execPath, [operatorScript], {
      env: { PATH: process.env.PATH ?? '', LOCUS_OPERATOR_RETRY_PERIOD_SECONDS: '12' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS \(10\), which must exceed LOCUS_OPERATOR_RETRY_PERIOD_SECONDS \(12\)/);
  });

  void it('stays up but not ready while the API server does not answer; SIGTERM ends it with 0', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const port = await freePort();
    writeFileSync(kubeconfig, toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'gone', cluster: { server: `http://127.0.0.1:${port}` } }],
      users: [{ name: 'nobody', user: { token: 'not-a-real-token' } }],
      contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'nobody' } }],
      'current-context': 'gone',
    }));
    const operator = await startOperatorProcess('lonely', { KUBECONFIG: kubeconfig, LOCUS_STORE: `sqlite:${join(dir, 'locus.db')}`, LOCUS_BUS: 'local' });
    try {
      assert.equal((await operator.get('/healthz')).status, 200);
      const ready = await operator.get('/readyz');
      assert.equal(ready.status, 503);
      // The Lease first: without it this replica can neither lead nor follow.
      assert.match(ready.text, /neither leading nor following: reading Lease default\/locus-operator/);
      assert.equal(await operator.metric('locus_operator_leader'), 0);
      assert.equal((await operator.get('/nothing')).status, 404);
    } finally {
      await operator.stop('SIGTERM');
    }
    assert.equal((await operator.exited).code, 0, operator.output());
    assert.match(operator.output(), /locus operator stopped/);
  });
});
