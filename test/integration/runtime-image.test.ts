/**
 * The image's runtime stage, without Docker: its files laid out as the Dockerfile's own
 * `COPY --from=build` lines say (test/support/runtime-image.ts reads them, so the two cannot
 * drift), then the processes started from there as the image starts them (its ENTRYPOINT,
 * CMD and ENV): the server (`/healthz`, on an embedded SQLite store in a temporary
 * directory), the CLI (beside it, on the same store) and the operator (against a real
 * kube-apiserver). A file the processes need but the stage does not copy fails this test.
 *
 * node_modules holds this checkout's production packages only (symlinked, as package-lock.json
 * lists them without `dev`: what the build stage's `npm prune --omit=dev` keeps), so a runtime
 * import of a dev-only package fails here too. The packages' own dependencies resolve from the
 * checkout, where the dev ones remain; the lock decides those, not this code.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { freePort, kubeToolPath, startKubeApiServer, type KubeApiServer } from '../support/kube-apiserver.js';
import { layOutRuntimeStage, parseRuntimeStage } from '../support/runtime-image.js';
import { captureChildOutput, recordSecret } from '../support/test-logs.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const stage = parseRuntimeStage(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const adminToken = 'runtime-image-admin-token-0123456789';
recordSecret(adminToken);

/** Why the operator part cannot run here (the kube tools are not built yet), or null. */
function kubeToolsMissing(): string | null {
  try {
    kubeToolPath('etcd');
    kubeToolPath('kube-apiserver');
    return null;
  } catch (err) {
    return `the operator part needs etcd and kube-apiserver: ${(err as Error).message}`;
  }
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Starts `node <entrypoint options> <args>` in the layout's WORKDIR with the image's ENV and `env`. */
function startInImage(workdir: string, args: readonly string[], env: Record<string, string>): Started {
  const [node, ...options] = stage.entrypoint;
  assert.equal(node, 'node', 'the image runs node');
  const child = spawn(process.execPath, [...options, ...args], {
    cwd: workdir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...stage.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  captureChildOutput(child);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));
  return { child, output: () => out, exited };
}

/** Runs a command that ends by itself (the CLI, `--help`); fails after 20 s. */
async function runInImage(workdir: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = startInImage(workdir, args, env);
  let stdout = '';
  let stderr = '';
  started.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => started.child.kill('SIGKILL'), 20_000);
  const code = await started.exited;
  clearTimeout(timer);
  return { code, stdout, stderr };
}

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(3000) })).status;
  } catch {
    return 0;
  }
}

/** Waits until `url` answers 200; fails with the process's output when it exits first or takes too long. */
async function until200(proc: Started, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await status(url)) !== 200) {
    if (proc.child.exitCode !== null) assert.fail(`exited with ${proc.child.exitCode} before ${url} answered 200:\n${proc.output()}`);
    if (Date.now() > deadline) assert.fail(`${url} did not answer 200 within ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(proc: Started): Promise<number | null> {
  if (proc.child.exitCode === null) proc.child.kill('SIGTERM');
  return proc.exited;
}

describe("the image's runtime stage, laid out from the Dockerfile's COPY lines", { timeout: 300_000 }, () => {
  let dir: string;
  let workdir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'locus-image-'));
    workdir = layOutRuntimeStage(stage, root, join(dir, 'image'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the stage is what the processes are started from: node with options, the server by default, production packages only', () => {
    assert.equal(stage.entrypoint[0], 'node');
    assert.deepEqual(stage.cmd, ['dist/cmd/server.js']);
    const packages = readdirSync(join(workdir, 'node_modules'));
    for (const name of ['express', 'better-sqlite3', '@kubernetes']) assert.ok(packages.includes(name), `${name} is a runtime dependency`);
    for (const name of ['typescript', 'eslint', 'fast-check']) assert.ok(!packages.includes(name), `${name} is a dev dependency`);
  });

  for (const script of ['server', 'operator', 'cli', 'cluster']) {
    it(`dist/cmd/${script}.js --help and -h print help and exit 0, starting nothing`, async () => {
      // A process that started would run until stopped (runInImage gives up after 20 s) and
      // would have made its store: neither may happen.
      const helpDir = join(dir, `help-${script}`);
      mkdirSync(helpDir);
      for (const flag of ['--help', '-h']) {
        const result = await runInImage(workdir, [`dist/cmd/${script}.js`, flag], {
          LOCUS_STORE: `sqlite:${join(helpDir, 'locus.db')}`,
          LOCUS_HTTP_PORT: '0',
          LOCUS_TCP_PORT: '0',
          LOCUS_OPERATOR_PORT: '0',
          KUBECONFIG: join(helpDir, 'no-kubeconfig'),
        });
        assert.equal(result.code, 0, `${script} ${flag}: ${result.stderr}`);
        assert.match(result.stdout, /^usage:/i, `${script} ${flag}`);
      }
      assert.deepEqual(readdirSync(helpDir), [], 'nothing was written');
    });
  }

  it('the server serves /healthz and its build info on an embedded store; the CLI manages realms on that store beside it', async () => {
    const data = join(dir, 'data');
    mkdirSync(data);
    const store = `sqlite:${join(data, 'locus.db')}`;
    const [httpPort, tcpPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${httpPort}`;
    const server = startInImage(workdir, stage.cmd, {
      LOCUS_HOST: '127.0.0.1',
      LOCUS_HTTP_PORT: String(httpPort),
      LOCUS_TCP_PORT: String(tcpPort),
      LOCUS_STORE: store,
      LOCUS_ADMIN_TOKEN: adminToken,
      LOCUS_DEMO_REALM: 'false',
    });
    try {
      await until200(server, `${url}/healthz`, 30_000);
      const built = JSON.parse(readFileSync(join(root, 'dist', 'build-info.json'), 'utf8')) as { version: string; buildDate: string };
      const version = (await (await fetch(`${url}/v2/version`)).json()) as { version: string; buildDate: string };
      assert.deepEqual({ version: version.version, buildDate: version.buildDate }, { version: built.version, buildDate: built.buildDate });

      const created = await runInImage(workdir, ['dist/cmd/cli.js', 'realm', 'create', 'image-test', '--store', store]);
      assert.equal(created.code, 0, created.stderr);
      const listed = await runInImage(workdir, ['dist/cmd/cli.js', 'realm', 'list', '--store', store]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(Object.keys(JSON.parse(listed.stdout) as object), ['image-test']);
      // The server sees the realm the CLI made.
      const realm = await fetch(`${url}/admin/v1/realm/image-test`, { headers: { authorization: `Bearer ${adminToken}` } });
      assert.equal(realm.status, 200, await realm.text());
    } finally {
      assert.equal(await stop(server), 0, server.output());
    }
  });

  const missing = kubeToolsMissing();
  it('the operator serves /healthz and becomes ready against a real kube-apiserver, and reconciles a Realm', { skip: missing ?? false }, async () => {
    let kube: KubeApiServer | null = null;
    let operator: Started | null = null;
    try {
      kube = await startKubeApiServer();
      const crd = await kube.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', readFileSync(join(root, 'crds', 'realms.locus.dev.yaml'), 'utf8'), {
        'content-type': 'application/yaml',
      });
      assert.equal(crd.status, 201, crd.text);
      const realms = '/apis/locus.dev/v1alpha1/namespaces/default/realms';
      for (let deadline = Date.now() + 30_000; (await kube.request('GET', realms)).status !== 200; ) {
        assert.ok(Date.now() < deadline, 'the Realm API is not served');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const data = join(dir, 'operator-data');
      mkdirSync(data);
      const port = await freePort();
      operator = startInImage(workdir, ['dist/cmd/operator.js'], {
        KUBECONFIG: kube.kubeconfigPath,
        LOCUS_STORE: `sqlite:${join(data, 'locus.db')}`,
        LOCUS_BUS: 'local',
        LOCUS_OPERATOR_HOST: '127.0.0.1',
        LOCUS_OPERATOR_PORT: String(port),
        LOCUS_OPERATOR_LEASE_NAMESPACE: 'default',
      });
      const url = `http://127.0.0.1:${port}`;
      await until200(operator, `${url}/healthz`, 30_000);
      await until200(operator, `${url}/readyz`, 60_000);
      const applied = await kube.request('POST', realms, { apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'image-test' }, spec: {} });
      assert.equal(applied.status, 201, applied.text);
      for (let deadline = Date.now() + 30_000; ; ) {
        const realm = await kube.request('GET', `${realms}/image-test`);
        if ((realm.body as { status?: { phase?: string } }).status?.phase === 'Ready') break;
        assert.ok(Date.now() < deadline, `the Realm did not become Ready: ${realm.text}\n${operator.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      if (operator !== null) assert.equal(await stop(operator), 0, operator.output());
      await kube?.stop();
    }
  });
});
