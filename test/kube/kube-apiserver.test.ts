/**
 * The envtest-style harness (test/support/kube-apiserver.ts) against the real etcd and
 * kube-apiserver that scripts/install-k8s-tools.sh builds: it starts both on loopback, serves
 * with its own CA, authenticates the admin by client certificate, enforces RBAC, writes a
 * kubeconfig, and leaves no process or directory behind, not even when its test process is
 * SIGKILLed. Without the binaries these tests fail, naming the install script.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-apiserver.js';

const installScript = fileURLToPath(new URL('../../../scripts/install-k8s-tools.sh', import.meta.url));
const mainScript = fileURLToPath(new URL('../support/kube-apiserver-main.js', import.meta.url));

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number | undefined, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** An HTTPS GET without the admin's client certificate (anonymous), trusting the run's CA. */
function anonymousGet(server: KubeApiServer, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { ca: server.caPem }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

void describe('kube-apiserver test harness', () => {
  let staleDir = '';
  let server: KubeApiServer;

  before(async () => {
    // A test process that dies by SIGKILL takes etcd and kube-apiserver with it.
    const child = spawn(process.execPath, [mainScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the harness process exited (${String(code)}) before it was ready`)));
    });
    const started = JSON.parse(line) as { pids: { etcd: number; apiserver: number }; dir: string };
    assert.ok(alive(started.pids.etcd) && alive(started.pids.apiserver), 'both processes run');
    child.kill('SIGKILL');
    assert.ok(await gone(started.pids.apiserver), 'kube-apiserver died with its SIGKILLed parent');
    assert.ok(await gone(started.pids.etcd), 'etcd died with its SIGKILLed parent');
    // A SIGKILLed run cannot remove its own directory; the next start (here, or that of another
    // test file running meanwhile) removes it.
    staleDir = started.dir;

    server = await startKubeApiServer();
  });

  after(async () => {
    await server?.stop();
  });

  void it('removed the directory of the SIGKILLed run when it started', () => {
    assert.equal(existsSync(staleDir), false);
  });

  void it('is ready and reports the pinned Kubernetes version', async () => {
    const ready = await server.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    const version = await server.request('GET', '/version');
    assert.equal(version.status, 200);
    assert.match((version.body as { gitVersion: string }).gitVersion, /^v1\.(3[4-9]|[4-9]\d)\./);
  });

  void it('authenticates the admin by client certificate and enforces RBAC on everyone else', async () => {
    const admin = await server.request('GET', '/api/v1/namespaces');
    assert.equal(admin.status, 200);
    const review = await server.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(review.status, 201, review.text);
    const user = (review.body as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    assert.equal(user.username, 'locus-admin');
    assert.ok(user.groups.includes('system:masters'));
    // Anonymous may read the health endpoints (system:public-info-viewer) but nothing else.
    assert.equal(await anonymousGet(server, '/readyz'), 200);
    assert.equal(await anonymousGet(server, '/api/v1/namespaces'), 403);
    // RBAC decides for a user without rights: impersonation by the admin.
    const denied = await server.request('GET', '/api/v1/namespaces', undefined, { 'impersonate-user': 'nobody' });
    assert.equal(denied.status, 403);
    assert.match((denied.body as { message: string }).message, /User "nobody" cannot list resource "namespaces"/);
  });

  void it('writes a kubeconfig naming the server, its CA and the admin credentials', () => {
    const text = readFileSync(server.kubeconfigPath, 'utf8');
    assert.match(text, new RegExp(`server: "?${server.url.replace(/[.]/g, '\\.')}"?\\n`));
    assert.ok(text.includes(Buffer.from(server.caPem).toString('base64')));
    assert.ok(text.includes(Buffer.from(server.clientCertPem).toString('base64')));
    assert.match(text, /current-context: test/);
  });

  void it('stops both processes and removes its directory', async () => {
    const { etcd, apiserver } = server.pids();
    const dir = server.dir;
    await server.stop();
    assert.equal(alive(apiserver), false);
    assert.equal(alive(etcd), false);
    assert.equal(existsSync(dir), false);
  });
});

void describe('scripts/install-k8s-tools.sh', () => {
  void it('is a no-op when the pinned versions are installed: it needs no Go and builds nothing', () => {
    // PATH without Go: any build would fail with "Go is not installed".
    const run = spawnSync('bash', [installScript], { encoding: 'utf8', env: { ...process.env, PATH: '/usr/bin:/bin' }, timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, '');
  });

  void it('runs at the end of scripts/install-tools.sh, so npm test and .ci/run install the tools', () => {
    const text = readFileSync(new URL('../../../scripts/install-tools.sh', import.meta.url), 'utf8');
    assert.match(text, /^bash "\$\(dirname "\$0"\)\/install-k8s-tools\.sh"$/m);
  });
});
