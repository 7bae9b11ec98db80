/** Starts a real server on an ephemeral port over a temp SQLite file, with realms and tokens. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { testConfig, type Config } from '../../internal/config/config.js';
import { start, type RunningServer } from '../../internal/server.js';
import type { Clock } from '../../internal/service/clock.js';

export const adminToken = 'test-admin-token-0123456789';

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
  const options = clock === undefined ? {} : { clock };
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
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Every row of every table, in a stable order: "stored data byte for byte". Not
 * `search_queue`: the full-text indexer's work list, whose entries the indexer's thread
 * applies and drops at its own pace (only writes that change objects add entries).
 */
export function dumpDatabase(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'search_queue' ORDER BY name")
      .all() as { name: string }[];
    const parts: string[] = [];
    for (const { name } of tables) {
      const rows = db
        .prepare(`SELECT * FROM "${name.replaceAll('"', '""')}"`)
        .raw()
        .all()
        .map((row) => JSON.stringify(row, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v)))
        .sort();
      parts.push(`${name}:${rows.join('\n')}`);
    }
    return parts.join('\n');
  } finally {
    db.close();
  }
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
