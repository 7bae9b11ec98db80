/**
 * Starts the test API server (kube-apiserver.ts) and prints one JSON line with its process ids
 * and directory, then waits to be killed: the harness test SIGKILLs this process and checks that
 * etcd and kube-apiserver die with it.
 */
import { startKubeApiServer } from './kube-apiserver.js';

const server = await startKubeApiServer();
process.stdout.write(`${JSON.stringify({ pids: server.pids(), dir: server.dir, url: server.url })}\n`);
setInterval(() => undefined, 60_000);
