/** Starts a real server on an ephemeral port over a temp SQLite file, with realms and tokens. Stored data is read through the store port (dumpStore). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig, type Config } from '../../internal/config/config.js';
import { start, type RunningServer } from '../../internal/server.js';
import type { Clock } from '../../internal/service/clock.js';
import type { Page, Store } from '../../internal/store/port.js';
import { createLogger } from '../../internal/observability/logger.js';
import { inProcessLogDestination, recordSecret } from './test-logs.js';

export const adminToken = 'test-admin-token-0123456789';
recordSecret(adminToken);

export interface Harness {
  server: RunningServer;
  url: string;
  dir: string;
  dbPath: string;
  config: Config;
  /** Restarts the server on the same database file. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(overrides: Partial<Config> = {}, clock?: Clock): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'locus-test-'));
  const dbPath = join(dir, 'locus.db');
  const config = testConfig({ store: `sqlite:${dbPath}`, adminToken, ...overrides });
  // With a run's log directory (scripts/run-tests.mjs), the server logs everything there.
  const destination = inProcessLogDestination();
  const logger = destination === undefined ? undefined : createLogger('trace', destination);
  const options = { ...(clock === undefined ? {} : { clock }), ...(logger === undefined ? {} : { logger }) };
  const harness: Harness = {
    server: await start(config, options),
    url: '',
    dir,
    dbPath,
    config,
    async restart() {
      await harness.server.close();
      harness.server = await start(config, options);
      harness.url = harness.server.httpUrl;
    },
    async stop() {
      await harness.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  harness.url = harness.server.httpUrl;
  return harness;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test assertions read arbitrary JSON
  json: any;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export async function call(url: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined && options.token !== null) headers.authorization = `Bearer ${options.token}`;
  recordSecret(headers.authorization ?? headers.Authorization);
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url + path, { method, headers, body });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  // Tokens and signing-key secrets the API issues are secrets the logs must not show.
  const issued = json as { token?: unknown; secret?: unknown } | undefined;
  if (typeof issued?.token === 'string') recordSecret(issued.token);
  if (typeof issued?.secret === 'string') recordSecret(issued.secret);
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Everything the store holds, read through the store port (never the database file, so
 * that it works for every adapter): tenants and their signing keys, realms with their
 * tokens, areas, tasks, objects and every object's history, in a stable order. Tests compare
 * two dumps to show that a refused request changed nothing.
 */
export async function dumpStore(store: Store): Promise<string> {
  const parts: string[] = [];
  const line = (kind: string, value: unknown): void => {
    parts.push(`${kind}:${JSON.stringify(value)}`);
  };
  for (const tenant of await store.tenants.list()) {
    line('tenant', tenant);
    for (const key of await store.signingKeys.listByTenant(tenant.id)) line('signing_key', key);
  }
  for (const realm of await store.realms.list()) {
    line('realm', realm);
    for (const token of await store.tokens.listByRealm(realm.id)) line('token', token);
    for await (const area of pages((cursor) => store.areas.list(realm.id, { limit: 1000, ...cursor }))) line('area', area);
    for (const task of await store.tasks.list(realm.id)) line('task', task);
    for await (const object of pages((cursor) => store.objects.list(realm.id, { limit: 1000, ...cursor }))) {
      line('object', object);
      for await (const entry of pages((cursor) => store.objects.history(realm.id, object.id, { limit: 1000, order: 'asc', ...cursor }))) line('fix', entry);
    }
  }
  return parts.join('\n');
}

/** Every item of a paged listing, following its cursors. */
async function* pages<T>(read: (cursor: { cursor?: string }) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await read(cursor === null ? {} : { cursor });
    yield* page.items;
    cursor = page.next;
  } while (cursor !== null);
}

/** Creates a realm and returns tokens of each scope for it. */
export async function makeRealm(url: string, realm: string): Promise<{ read: string; write: string; admin: string }> {
  const put = await call(url, 'PUT', `/admin/v1/realm/${encodeURIComponent(realm)}`, { token: adminToken, body: {} });
  if (put.status !== 200) throw new Error(`realm create failed: ${put.text}`);
  const tokens: Record<string, string> = {};
  for (const scope of ['read', 'write', 'admin']) {
    const res = await call(url, 'POST', `/admin/v1/realm/${encodeURIComponent(realm)}/token`, {
      token: adminToken,
      body: { scope },
    });
    if (res.status !== 200) throw new Error(`token create failed: ${res.text}`);
    tokens[scope] = (res.json as { token: string }).token;
  }
  return tokens as { read: string; write: string; admin: string };
}
