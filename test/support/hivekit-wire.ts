/**
 * A tiny test client that speaks the Hivekit v1 wire the way the official
 * `@hivekit/client-js` 1.11.1 does (written from /work/shared/spec/hivekit-compat.md, not
 * a port of the client): the `Bearer <jwt>` first frame, 21-character URL-safe `cid`s,
 * replies correlated by `cid` with a per-request timeout, pushes collected by subscription
 * id, pub/sub deliveries by (`eve`, `sid`), and an HTTP and a TCP variant of the same
 * envelope. Every frame the server sends is checked against the rules of compat 3.1 and
 * 3.8 and any breach is kept in `violations`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import type { Config } from '../../internal/config/config.js';
import { startHarness, type Harness } from './harness.js';
import { recordSecret } from './test-logs.js';

/* eslint-disable @typescript-eslint/no-unsafe-return -- helpers hand back the wire's arbitrary JSON */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire carries arbitrary JSON
export type Json = any;
export type Msg = Record<string, unknown>;

/** The tenant secret of the conformance server (the official suite's `CHANGE_ME`). */
export const testSecret = 'CHANGE_ME';

/**
 * The config override that sets the default tenant's JWT secret (`LOCUS_JWT_SECRET`).
 * ASSUMPTION, kept in this one place: Config gains `jwtSecret: string | null`.
 */
function jwtSecretOverride(secret: string): Partial<Config> {
  return { jwtSecret: secret };
}

export interface Conformance {
  h: Harness;
  /** `http://127.0.0.1:<port>` */
  url: string;
  tcpPort: number;
  /** A `sub`-only JWT of the default tenant: full rights (compat 2). */
  token: string;
  /** A realm created for this file through v1 `rea cre`. */
  realm: string;
  stop(): Promise<void>;
}

/** Starts locus in-process with the test secret and creates a fresh realm over v1. */
export async function startConformance(area: string, overrides: Partial<Config> = {}): Promise<Conformance> {
  const h = await startHarness({ ...jwtSecretOverride(testSecret), ...overrides });
  const token = await signToken({ sub: `conformance-${area}` });
  const realm = uniqueId(`conf-${area}`);
  try {
    await createRealm(h.url, token, realm);
  } catch (err) {
    await h.stop();
    throw err;
  }
  return {
    h,
    url: h.url,
    tcpPort: h.server.tcpPort,
    token,
    realm,
    async stop() {
      await closeAll(h.url, h.server.tcpPort);
      await h.stop();
    },
  };
}

/** Creates a realm through v1 `rea cre` over HTTP; throws unless the reply is `suc`. */
export async function createRealm(url: string, token: string, realm: string, extra: Msg = {}): Promise<void> {
  const res = await postActions(url, token, [{ typ: 'rea', act: 'cre', id: realm, ...extra }]);
  const reply = res.json?.[0];
  if (res.status !== 200 || reply?.res !== 'suc') throw new Error(`realm create failed: ${res.status} ${res.text}`);
}

// ---------------------------------------------------------------- ids and tokens

/** A 21-character URL-safe random id, like the client's request ids (compat 3.4). */
export function newCid(): string {
  return randomBytes(16).toString('base64url').slice(0, 21);
}

/** The heartbeat's correlation id: `heartbeat-<random>` (compat 3.6). */
export function heartbeatCid(): string {
  return `heartbeat-${randomBytes(6).toString('hex')}`;
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export interface TokenOptions {
  secret?: string;
  /** seconds since the epoch */
  exp?: number;
  nbf?: number;
  kid?: string;
  /** Any other claims (`dpv`, `per`, …). */
  claims?: Record<string, unknown>;
}

/** An HS256 JWT `{sub, iat, …}` as `jsonwebtoken` signs it without options (compat 2). */
export async function signToken(payload: { sub: string }, options: TokenOptions = {}): Promise<string> {
  const header: { alg: string; typ: string; kid?: string } = { alg: 'HS256', typ: 'JWT' };
  if (options.kid !== undefined) header.kid = options.kid;
  const jwt = new SignJWT({ ...options.claims, sub: payload.sub }).setProtectedHeader(header).setIssuedAt();
  if (options.exp !== undefined) jwt.setExpirationTime(options.exp);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  const secret = options.secret ?? testSecret;
  const signed = await jwt.sign(new TextEncoder().encode(secret));
  recordSecret(signed);
  recordSecret(secret);
  return signed;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------- the socket client

export interface Received {
  /** The message element. */
  el: Json;
  /** Index of the server frame (WebSocket frame or TCP line) it came in. */
  frame: number;
  /**
   * Synchronous delivery burst it came in: frames handled without a promise step in between
   * share a turn. The official client attaches a subscription's listener a promise step after
   * the create reply, so a push in the reply's turn is lost (compat 5.4).
   */
  turn: number;
  at: number;
}

interface Pending {
  resolve: (el: Json) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

type Transport = 'ws' | 'tcp';

const live = new Set<HivekitWire>();
let created: HivekitWire[] = [];

/**
 * Asserts that no connection opened since the last call broke compat 3.1/3.8 (every frame a
 * text frame holding a JSON array, no cid on pushes, one reply per cid, …). For `afterEach`.
 */
export function assertWiresClean(): void {
  const wires = created;
  created = [];
  for (const w of wires) w.assertClean();
}

/** Closes every wire still open to the server at `httpUrl` / `tcpPort` (called by `Conformance.stop`). */
export async function closeAll(httpUrl: string, tcpPort: number): Promise<void> {
  const mine = [...live].filter((w) => w.origin === httpUrl || w.origin === `tcp:${tcpPort}`);
  await Promise.all(mine.map((w) => w.close()));
}

export class HivekitWire {
  /** Every breach of compat 3.1/3.8 seen on this connection. */
  readonly violations: string[] = [];
  readonly pushes: Received[] = [];
  readonly deliveries: Received[] = [];
  /** cid-less messages that are neither pushes nor deliveries (auth replies, errors). */
  readonly unsolicited: Received[] = [];
  readonly replies = new Map<string, Received[]>();
  frameCount = 0;
  /** Number of elements in each server frame (index = frame). */
  readonly frameSizes: number[] = [];
  isClosed = false;
  readonly closed: Promise<void>;
  private readonly sent = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  private waiters: (() => void)[] = [];
  private turn = 0;
  private turnOpen = false;
  private markClosed: () => void = () => undefined;

  constructor(
    readonly transport: Transport,
    /** The server: its HTTP URL (WebSocket) or `tcp:<port>`. */
    readonly origin: string,
    private readonly write: (text: string) => void,
    private readonly end: (abrupt: boolean) => void,
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    live.add(this);
    created.push(this);
  }

  /** Handles one server frame (WebSocket message or TCP line). */
  onFrame(text: string, binary: boolean): void {
    const frame = this.frameCount++;
    if (!this.turnOpen) {
      this.turn++;
      this.turnOpen = true;
      queueMicrotask(() => {
        this.turnOpen = false;
      });
    }
    const at = Date.now();
    if (binary) this.violations.push(`frame ${frame}: binary frame`);
    let value: Json;
    try {
      value = JSON.parse(text);
    } catch {
      this.violations.push(`frame ${frame}: not JSON: ${text.slice(0, 80)}`);
      this.wake();
      return;
    }
    if (!Array.isArray(value)) {
      this.violations.push(`frame ${frame}: not a JSON array: ${text.slice(0, 80)}`);
      this.wake();
      return;
    }
    this.frameSizes[frame] = value.length;
    for (const el of value) this.route({ el, frame, turn: this.turn, at });
    this.wake();
  }

  private route(r: Received): void {
    const el = r.el;
    if (typeof el !== 'object' || el === null || Array.isArray(el)) {
      this.violations.push(`frame ${r.frame}: element is not an object: ${JSON.stringify(el)}`);
      return;
    }
    if (typeof el.cid === 'string') {
      if (el.typ === 'sub' && el.uty !== undefined) this.violations.push(`push with cid: ${JSON.stringify(el)}`);
      if (el.typ === 'sys' && el.act === 'aut') this.violations.push(`auth reply with cid: ${JSON.stringify(el)}`);
      const list = this.replies.get(el.cid) ?? [];
      list.push(r);
      this.replies.set(el.cid, list);
      if (!this.sent.has(el.cid)) this.violations.push(`reply for a cid never sent: ${JSON.stringify(el)}`);
      else if (list.length > 1) this.violations.push(`second reply for cid ${el.cid}: ${JSON.stringify(el)}`);
      const p = this.pending.get(el.cid);
      if (p !== undefined) {
        this.pending.delete(el.cid);
        clearTimeout(p.timer);
        p.resolve(el);
      }
      return;
    }
    if (el.cid !== undefined) this.violations.push(`cid that is not a string: ${JSON.stringify(el)}`);
    if (el.typ === 'sub' && el.res === undefined) {
      checkPushPayload(el, this.violations);
      this.pushes.push(r);
    } else if (el.typ === 'rea' && el.act === 'pub' && el.res === undefined) {
      this.deliveries.push(r);
    } else {
      if (el.res === 'suc' && !(el.typ === 'sys' && el.act === 'aut')) this.violations.push(`success reply without cid: ${JSON.stringify(el)}`);
      this.unsolicited.push(r);
    }
  }

  onClose(): void {
    this.isClosed = true;
    live.delete(this);
    for (const [cid, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(`connection closed before the reply to ${cid}`));
    }
    this.pending.clear();
    this.markClosed();
    this.wake();
  }

  /** Sends text as it is (a WebSocket text frame, or one TCP line). */
  sendText(text: string): void {
    this.write(text);
  }

  /** Sends messages as they are, in one frame; records their cids. */
  sendRaw(messages: Msg[]): void {
    for (const m of messages) if (typeof m.cid === 'string') this.sent.add(m.cid);
    this.write(JSON.stringify(messages));
  }

  /**
   * Sends messages in one frame, giving a fresh `cid` to each one that has none, except
   * `set` (a WebSocket `set` carries no cid, compat 4.2). Resolves with the reply of each
   * message that has a cid, in the order sent; rejects after `timeoutMs` per reply.
   */
  batch(messages: Msg[], timeoutMs = 2000): Promise<Json[]> {
    const withCid = messages.map((m) => (m.cid === undefined && m.act !== 'set' ? { ...m, cid: newCid() } : m));
    const waits = withCid.filter((m) => typeof m.cid === 'string').map((m) => this.awaitReply(m.cid as string, timeoutMs));
    this.sendRaw(withCid);
    return Promise.all(waits);
  }

  /** Sends one message with a fresh cid and resolves with its reply. */
  async request(message: Msg, timeoutMs = 2000): Promise<Json> {
    const [reply] = await this.batch([{ cid: newCid(), ...message }], timeoutMs);
    return reply;
  }

  /** The reply's arrival record for `cid` (first one). */
  replyOf(cid: string): Received | undefined {
    return this.replies.get(cid)?.[0];
  }

  private awaitReply(cid: string, timeoutMs: number): Promise<Json> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(cid);
        reject(new Error(`no reply to cid ${cid} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(cid, { resolve, reject, timer });
    });
  }

  /** Sends `Bearer <token>` and resolves with the next `sys`/`aut` element (compat 1.2). */
  async authenticate(token: string, timeoutMs = 2000): Promise<Received> {
    const from = this.unsolicited.length;
    recordSecret(token);
    this.sendText(`Bearer ${token}`);
    await this.until(() => this.authFrom(from) !== undefined, timeoutMs, 'the sys/aut reply');
    return this.authFrom(from) as Received;
  }

  private authFrom(from: number): Received | undefined {
    return this.unsolicited.slice(from).find((r) => r.el.typ === 'sys' && r.el.act === 'aut');
  }

  /** Authenticates and asserts success. */
  async signIn(token: string): Promise<void> {
    const r = await this.authenticate(token);
    assert.equal(r.el.res, 'suc', `sign-in failed: ${JSON.stringify(r.el)}`);
  }

  /** The push elements of one subscription id, in arrival order. */
  pushesOf(subId: string): Json[] {
    return this.pushes.filter((r) => r.el.id === subId).map((r) => r.el);
  }

  pushRecords(subId: string): Received[] {
    return this.pushes.filter((r) => r.el.id === subId);
  }

  /** The pub/sub deliveries for (`eve`, `sid`). */
  deliveriesOf(eve: string, sid: string): Json[] {
    return this.deliveries.filter((r) => r.el.dat?.eve === eve && r.el.sid === sid).map((r) => r.el);
  }

  /** Marks the current push count of `subId`; `exactly` then checks what came after. */
  watch(subId: string): Watch {
    return new Watch(() => this.pushesOf(subId), `pushes of ${subId}`);
  }

  watchDeliveries(eve: string, sid: string): Watch {
    return new Watch(() => this.deliveriesOf(eve, sid), `deliveries of (${eve}, ${sid})`);
  }

  /** Waits until `ready` holds, or fails after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      if (this.isClosed) throw new Error(`connection closed while waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Closes the connection (a normal close) and waits for it to end. */
  async close(): Promise<void> {
    if (!this.isClosed) this.end(false);
    await Promise.race([this.closed, sleep(2000)]);
  }

  /** Drops the connection abruptly, as a network failure would (does not wait). */
  drop(): void {
    if (!this.isClosed) this.end(true);
  }

  /** Asserts that nothing broke compat 3.1/3.8 on this connection. */
  assertClean(): void {
    assert.deepEqual(this.violations, [], `wire violations:\n${this.violations.join('\n')}`);
  }
}

/** Counts what arrived after a mark. */
export class Watch {
  private readonly start: number;

  constructor(
    private readonly all: () => Json[],
    private readonly what: string,
  ) {
    this.start = all().length;
  }

  /** What arrived since the mark. */
  get got(): Json[] {
    return this.all().slice(this.start);
  }

  /** Waits `windowMs` and asserts that exactly `n` arrived since the mark; returns them. */
  async exactly(n: number, windowMs: number): Promise<Json[]> {
    await sleep(windowMs);
    const got = this.got;
    assert.equal(got.length, n, `expected exactly ${n} ${this.what} within ${windowMs} ms, got ${got.length}: ${JSON.stringify(got)}`);
    return got;
  }

  /** Waits up to `timeoutMs` for at least `n` since the mark; returns them. */
  async atLeast(n: number, timeoutMs: number): Promise<Json[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.got.length < n && Date.now() < deadline) await sleep(10);
    const got = this.got;
    assert.ok(got.length >= n, `expected ${n} ${this.what} within ${timeoutMs} ms, got ${got.length}: ${JSON.stringify(got)}`);
    return got;
  }
}

/** Compat 3.8/5.3: a push carries exactly one kind's payload key. */
function checkPushPayload(el: Json, violations: string[]): void {
  if (el.uty !== 'ful' && el.uty !== 'dta') violations.push(`push without uty ful/dta: ${JSON.stringify(el)}`);
  if (typeof el.id !== 'string') violations.push(`push without a subscription id: ${JSON.stringify(el)}`);
  const kinds = ['obj', 'tsk', 'are', 'ins', 'log', 'rea'].filter((k) => Boolean(el[k]));
  const realmEvent = el.dat?.typ === 'rea';
  if (kinds.length + (realmEvent ? 1 : 0) !== 1) violations.push(`push without exactly one payload kind: ${JSON.stringify(el)}`);
  if (el.obj !== undefined) {
    for (const key of Object.keys(el.obj as object)) if (!['cre', 'upd', 'del'].includes(key)) violations.push(`obj push with key ${key}`);
    for (const key of ['cre', 'upd', 'del']) {
      const map = el.obj[key];
      if (map !== undefined && (typeof map !== 'object' || map === null || Array.isArray(map))) {
        violations.push(`obj.${key} is not an object keyed by id: ${JSON.stringify(el)}`);
      }
    }
  }
}

export function wsUrlOf(httpUrl: string, path = '/ws'): string {
  return httpUrl.replace(/^http/, 'ws') + path;
}

/** Opens an unauthenticated WebSocket at `path` (default `/ws`, the suite's URL). */
export async function openWs(httpUrl: string, path = '/ws'): Promise<HivekitWire> {
  const ws = new WebSocket(wsUrlOf(httpUrl, path));
  const wire = new HivekitWire(
    'ws',
    httpUrl,
    (text) => ws.send(text),
    (abrupt) => (abrupt ? ws.terminate() : ws.close(1000)),
  );
  ws.on('message', (data: Buffer, isBinary: boolean) => wire.onFrame(data.toString('utf8'), isBinary));
  ws.on('close', () => wire.onClose());
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`WebSocket ${path} did not open within 2000 ms`)), 2000);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve();
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`upgrade refused at ${path}: ${res.statusCode}`));
    });
  });
  return wire;
}

/** Opens a WebSocket and signs in with `token`. */
export async function connectWire(httpUrl: string, token: string, path = '/ws'): Promise<HivekitWire> {
  const wire = await openWs(httpUrl, path);
  await wire.signIn(token);
  return wire;
}

/** Opens a raw TCP connection: one JSON array per line, first line `Bearer <token>`. */
export async function openTcp(port: number): Promise<HivekitWire> {
  const socket = netConnect({ port, host: '127.0.0.1', noDelay: true });
  let buffered = '';
  const wire = new HivekitWire(
    'tcp',
    `tcp:${port}`,
    (text) => socket.write(text + '\n'),
    (abrupt) => (abrupt ? socket.destroy() : socket.end()),
  );
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at).replace(/\r$/, '');
      buffered = buffered.slice(at + 1);
      wire.onFrame(line, false);
    }
  });
  socket.on('close', () => wire.onClose());
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('TCP connect timed out')), 2000);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return wire;
}

// ---------------------------------------------------------------- HTTP

export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
  /** The cid of each message sent, in order. */
  cids: string[];
}

/**
 * POSTs messages to the HTTP action endpoint as the client does (compat 1.3): a JSON array,
 * `Authorization: Bearer <token>`, every message with a `cid` (set included).
 */
export async function postActions(url: string, token: string | null, messages: Msg[], path = '/api/v1'): Promise<HttpReply> {
  const withCid = messages.map((m) => (m.cid === undefined ? { ...m, cid: newCid() } : m));
  const res = await postRaw(url, token, JSON.stringify(withCid), path);
  return { ...res, cids: withCid.map((m) => m.cid as string) };
}

export async function postRaw(url: string, token: string | null, body: string, path = '/api/v1'): Promise<Omit<HttpReply, 'cids'>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  recordSecret(token);
  const res = await fetch(url + path, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Sends one message over HTTP and returns its reply (asserts a 200 array holding it). */
export async function httpRequest(url: string, token: string, message: Msg, path = '/api/v1'): Promise<Json> {
  const res = await postActions(url, token, [message], path);
  assert.equal(res.status, 200, res.text);
  assert.ok(Array.isArray(res.json), res.text);
  const reply = res.json.find((r) => r?.cid === res.cids[0]);
  assert.ok(reply !== undefined, `no reply for ${res.cids[0]}: ${res.text}`);
  return reply;
}

// ---------------------------------------------------------------- assertions

/** Compat 3.5: an error reply echoing cid (and typ/act), with exactly this text and code. */
export function assertError(reply: Json, err: string | RegExp, erc: number, echo?: { typ?: string; act?: string; cid?: string }): void {
  assert.equal(reply?.res, 'err', `expected an error reply, got ${JSON.stringify(reply)}`);
  if (typeof err === 'string') assert.equal(reply.err, err, JSON.stringify(reply));
  else assert.match(String(reply.err), err, JSON.stringify(reply));
  assert.equal(reply.erc, erc, JSON.stringify(reply));
  if (echo?.cid !== undefined) assert.equal(reply.cid, echo.cid);
  if (echo?.typ !== undefined) assert.equal(reply.typ, echo.typ);
  if (echo?.act !== undefined) assert.equal(reply.act, echo.act);
}

/** An error reply with a client-error code (400–499) and a non-empty text. */
export function assertClientError(reply: Json): void {
  assert.equal(reply?.res, 'err', `expected an error reply, got ${JSON.stringify(reply)}`);
  assert.equal(typeof reply.err, 'string');
  assert.ok((reply.err as string).length > 0);
  assert.equal(typeof reply.erc, 'number');
  assert.ok(reply.erc >= 400 && reply.erc < 500, JSON.stringify(reply));
}

export function assertSuc(reply: Json): void {
  assert.equal(reply?.res, 'suc', `expected success, got ${JSON.stringify(reply)}`);
}

/** The zero-filled location of compat 4.2 for the given values; `tim` left out. */
export function zeroLoc(values: Record<string, number | string> = {}): Record<string, number | string> {
  return { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0, ...values };
}

/** A read record's `loc` without `tim`, after checking that `tim` is an ISO 8601 time. */
export function locWithoutTime(loc: Json): Json {
  assert.equal(typeof loc?.tim, 'string', `loc.tim missing: ${JSON.stringify(loc)}`);
  assert.ok(!Number.isNaN(Date.parse(loc.tim as string)), `loc.tim not a time: ${loc.tim}`);
  const rest = { ...(loc as Record<string, unknown>) };
  delete rest.tim;
  return rest;
}

/** The client's view of an object subscription (compat 5.3): ful empties, cre/upd store, del removes keys. */
export function applyObjectPushes(pushes: Json[], start: Map<string, Json> = new Map()): Map<string, Json> {
  const set = new Map(start);
  for (const p of pushes) {
    if (p.uty === 'ful') set.clear();
    for (const kind of ['cre', 'upd']) for (const [id, rec] of Object.entries((p.obj?.[kind] ?? {}) as Record<string, Json>)) set.set(id, rec);
    for (const id of Object.keys((p.obj?.del ?? {}) as Record<string, Json>)) set.delete(id);
  }
  return set;
}

/** The client's view of an area subscription: ful replaces, dta adds or overwrites. */
export function applyAreaPushes(pushes: Json[], start: Map<string, Json> = new Map()): Map<string, Json> {
  const set = new Map(start);
  for (const p of pushes) {
    if (p.uty === 'ful') set.clear();
    for (const [id, rec] of Object.entries((p.are ?? {}) as Record<string, Json>)) set.set(id, rec);
  }
  return set;
}

export const sortedKeys = (m: Map<string, unknown> | Record<string, unknown>): string[] =>
  (m instanceof Map ? [...m.keys()] : Object.keys(m)).sort();
