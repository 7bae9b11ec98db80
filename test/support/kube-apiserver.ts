/**
 * A real Kubernetes API server for tests, the way controller-runtime's envtest provides one:
 * etcd and kube-apiserver (built by scripts/install-k8s-tools.sh) on free loopback ports, with
 * a CA made for the run, a serving certificate for 127.0.0.1 and localhost, a service-account
 * signing key, RBAC on, and an admin client certificate (group system:masters) trusted through
 * --client-ca-file. Writes a kubeconfig, stops both processes, and leaves none behind: each is
 * started under `setpriv --pdeathsig SIGKILL` where util-linux has it (the kernel kills it when
 * the test process dies, even by SIGKILL), and killed on the test process's exit otherwise.
 * Temporary directories of runs whose process died are removed by the next start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toYaml } from '../../internal/kube/yaml.js';
import { toolPath, toolsBinDir } from './tools.js';

export interface KubeResponse {
  status: number;
  /** The body parsed as JSON, or the text when it is not JSON. */
  body: unknown;
  text: string;
}

export interface KubeApiServer {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly etcdUrl: string;
  /** The run's directory: certificates, keys, kubeconfig, etcd data, logs. */
  readonly dir: string;
  readonly kubeconfigPath: string;
  /** PEM of the CA that signed the serving and the client certificates. */
  readonly caPem: string;
  /** The admin's client certificate and key (PEM). */
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  /** Process ids of etcd and kube-apiserver (the real processes, not setpriv's). */
  pids(): { etcd: number | undefined; apiserver: number | undefined };
  /**
   * An HTTPS request as the admin. `body`: an object is sent as JSON, a string as is; `headers`
   * may set content-type (default application/json) and accept (default application/json).
   */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<KubeResponse>;
  /** Everything both processes wrote. */
  logs(): { etcd: string; apiserver: string };
  /** SIGTERM to kube-apiserver then etcd (SIGKILL after 10 s), and removes the directory. */
  stop(): Promise<void>;
}

export interface KubeApiServerOptions {
  /** Milliseconds to wait for /readyz (default 120 s: a start bootstraps RBAC roles, slowly on a busy machine). */
  readyTimeoutMs?: number;
  /** Extra kube-apiserver flags. */
  apiserverArgs?: string[];
}

const DIR_PREFIX = 'locus-kube-';
const ADMIN_USER = 'locus-admin';

/** The path of a tool scripts/install-k8s-tools.sh builds; a clear error when it is missing. */
export function kubeToolPath(name: 'etcd' | 'kube-apiserver' | 'helm'): string {
  try {
    return toolPath(name);
  } catch {
    throw new Error(
      `${name} is not installed (looked in ${toolsBinDir()} and on PATH): run bash scripts/install-k8s-tools.sh (it builds etcd, kube-apiserver and helm; the first build takes minutes)`,
    );
  }
}

/** A free TCP port on 127.0.0.1 (the kernel's pick; released before it is used). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes directories of earlier runs whose owning process is gone (a SIGKILLed test). */
function removeStaleRuns(): void {
  for (const name of readdirSync(tmpdir())) {
    const match = new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name);
    if (match === null || alive(Number(match[1]))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function openssl(args: string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.error !== undefined) throw new Error(`openssl could not run (${result.error.message}): install openssl`);
  if (result.status !== 0) throw new Error(`openssl ${args[0] ?? ''} failed: ${result.stderr}`);
}

/** A CA, a serving certificate for 127.0.0.1/localhost and an admin client certificate, in `dir`. */
function makeCertificates(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=locus-test-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const sign = (name: string, subject: string, extensions: string): void => {
    openssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
      '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`], dir);
  };
  sign('serving', '/CN=kube-apiserver',
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n');
  sign('admin', `/O=system:masters/CN=${ADMIN_USER}`,
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  // The service-account token signing key (ES256).
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
}

/** setpriv --pdeathsig where it exists: the child dies with the test process. */
const PDEATHSIG: string[] = (() => {
  const probe = spawnSync('setpriv', ['--pdeathsig', 'SIGKILL', '--', 'true']);
  return probe.status === 0 ? ['setpriv', '--pdeathsig', 'SIGKILL', '--'] : [];
})();

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  log: string;
}

function launch(binary: string, args: string[]): Proc {
  const [command, ...prefix] = PDEATHSIG.length > 0 ? PDEATHSIG : [binary];
  const argv = PDEATHSIG.length > 0 ? [...prefix, binary, ...args] : args;
  // setpriv execs the binary, so the child's pid is the binary's.
  const child = spawn(command ?? binary, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { child, exited: new Promise((resolve) => child.once('exit', () => resolve())), log: '' };
  const keep = (chunk: Buffer): void => {
    proc.log += chunk.toString();
    if (proc.log.length > 2_000_000) proc.log = proc.log.slice(-1_000_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return proc;
}

function running(proc: Proc): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null;
}

async function halt(proc: Proc): Promise<void> {
  if (!running(proc)) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
  await proc.exited;
  clearTimeout(timer);
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function get(url: string, agent?: Agent): Promise<number> {
  return new Promise((resolve) => {
    const done = (status: number): void => resolve(status);
    const req = agent === undefined ? httpRequest(url, { timeout: 2000 }) : httpsRequest(url, { agent, timeout: 2000 });
    req.on('response', (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
    req.end();
  });
}

async function waitUntil(what: string, check: () => Promise<boolean>, procs: Proc[], deadline: number, logs: () => string): Promise<void> {
  for (;;) {
    if (await check()) return;
    const dead = procs.find((proc) => !running(proc));
    if (dead !== undefined) throw new Error(`${what}: a process exited (${String(dead.child.exitCode ?? dead.child.signalCode)}):\n${logs()}`);
    if (Date.now() > deadline) throw new Error(`${what}: timed out:\n${logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Starts etcd and kube-apiserver; throws (having stopped both) when they do not become ready. */
export async function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const etcdBinary = kubeToolPath('etcd');
  const apiserverBinary = kubeToolPath('kube-apiserver');
  removeStaleRuns();
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  const procs: Proc[] = [];
  const onExit = (): void => {
    for (const proc of procs) if (running(proc)) proc.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const logs = (): { etcd: string; apiserver: string } => ({ etcd: procs[0]?.log ?? '', apiserver: procs[1]?.log ?? '' });
  const stop = async (): Promise<void> => {
    for (const proc of [...procs].reverse()) await halt(proc);
    process.off('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    makeCertificates(dir);
    const [etcdPort, peerPort, securePort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);

    procs.push(launch(etcdBinary, [
      '--name=default', `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`, '--unsafe-no-fsync', '--log-level=warn',
    ]));
    const etcdLogs = (): string => `etcd:\n${tail(logs().etcd)}`;
    await waitUntil('etcd /health', async () => (await get(`${etcdUrl}/health`)) === 200, procs, deadline, etcdLogs);

    const url = `https://127.0.0.1:${securePort}`;
    procs.push(launch(apiserverBinary, [
      '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${securePort}`,
      `--cert-dir=${dir}`, `--tls-cert-file=${join(dir, 'serving.crt')}`, `--tls-private-key-file=${join(dir, 'serving.key')}`,
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      `--etcd-servers=${etcdUrl}`,
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--endpoint-reconciler-type=none',
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      ...(options.apiserverArgs ?? []),
    ]));

    const caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const clientCertPem = readFileSync(join(dir, 'admin.crt'), 'utf8');
    const clientKeyPem = readFileSync(join(dir, 'admin.key'), 'utf8');
    const agent = new Agent({ ca: caPem, cert: clientCertPem, key: clientKeyPem, keepAlive: true });
    const apiLogs = (): string => `kube-apiserver:\n${tail(logs().apiserver)}\netcd:\n${tail(logs().etcd, 10)}`;
    await waitUntil('kube-apiserver /readyz', async () => (await get(`${url}/readyz`, agent)) === 200, procs, deadline, apiLogs);

    const kubeconfigPath = join(dir, 'kubeconfig');
    const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
    writeFileSync(kubeconfigPath, toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority-data': b64(caPem) } }],
      users: [{ name: ADMIN_USER, user: { 'client-certificate-data': b64(clientCertPem), 'client-key-data': b64(clientKeyPem) } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: ADMIN_USER } }],
      'current-context': 'test',
    }), { mode: 0o600 });

    const request = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<KubeResponse> =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
        const headers: Record<string, string> = { accept: 'application/json', ...extra };
        if (payload !== undefined) headers['content-type'] ??= 'application/json';
        const req = httpsRequest(`${url}${path}`, { method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, text });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });

    return {
      url,
      etcdUrl,
      dir,
      kubeconfigPath,
      caPem,
      clientCertPem,
      clientKeyPem,
      pids: () => ({ etcd: procs[0]?.child.pid, apiserver: procs[1]?.child.pid }),
      request,
      logs,
      async stop() {
        agent.destroy();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** True when the directory of a run still exists (for tests of the cleanup). */
export function runDirExists(dir: string): boolean {
  return existsSync(dir);
}
