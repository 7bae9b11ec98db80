/**
 * Test clients of the v1 action protocol over WebSocket (`ws`) and raw TCP (`net`),
 * with one interface: send a message, await the next reply, collect pushed events.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { recordSecret } from './test-logs.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
export type Json = any;

export type V1Transport = 'ws' | 'tcp';

export interface Closed {
  /** WebSocket close code; null over TCP. */
  code: number | null;
  reason: string;
}

export interface V1Client {
  readonly transport: V1Transport;
  /** Sends one message as it is (a WebSocket text frame, or the text plus "\n" over TCP). */
  sendText(text: string): void;
  /** Sends bytes as they are (TCP only: raw chunks, for framing tests). */
  sendBytes(bytes: Uint8Array | string): void;
  /** The next message that is not an event. */
  next(timeoutMs?: number): Promise<Json>;
  /** Sends actions and returns the reply array. */
  request(actions: unknown[], timeoutMs?: number): Promise<Json[]>;
  /** Sends one message (with a fresh `cid` unless it has one) and returns its reply. */
  one(action: Record<string, unknown>): Promise<Json>;
  /** Every event received so far, in order. */
  readonly events: Json[];
  /** When each event arrived (ms since the epoch, sub-millisecond), parallel to `events`. */
  readonly eventTimes: number[];
  /**
   * Hands every later event to `handler` with its arrival time instead of keeping it (in
   * `events` and `log`): a load test that receives many events keeps only what it measures.
   */
  onEvent(handler: (event: Json, arrived: number) => void): void;
  /** Resolves once `count` events have arrived in total. */
  waitForEvents(count: number, timeoutMs?: number): Promise<Json[]>;
  /** Every message received (replies and events), in order, as parsed JSON or raw text. */
  readonly log: Json[];
  readonly closed: Promise<Closed>;
  readonly isClosed: boolean;
  close(): Promise<void>;
}

/** A frame of pushed messages (`evt` events, Hivekit subscription pushes, pub/sub deliveries): none has `res`. */
const isEventMessage = (value: unknown): boolean =>
  Array.isArray(value) && value.length > 0 && value.every((e) => typeof e === 'object' && e !== null && !('res' in e));

let cids = 0;

class Client implements V1Client {
  readonly events: Json[] = [];
  readonly eventTimes: number[] = [];
  readonly log: Json[] = [];
  readonly closed: Promise<Closed>;
  isClosed = false;
  private readonly replies: Json[] = [];
  private waiters: (() => void)[] = [];
  private markClosed: (c: Closed) => void = () => undefined;
  private eventHandler: ((event: Json, arrived: number) => void) | null = null;

  constructor(
    readonly transport: V1Transport,
    private readonly write: (text: string) => void,
    private readonly writeRaw: (bytes: Uint8Array | string) => void,
    private readonly end: () => void,
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  onMessage(text: string): void {
    const arrived = performance.timeOrigin + performance.now();
    let value: Json;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    if (this.eventHandler !== null && isEventMessage(value)) {
      for (const event of value as Json[]) this.eventHandler(event, arrived);
      return;
    }
    this.log.push(value);
    if (isEventMessage(value)) {
      for (const event of value as Json[]) {
        this.events.push(event);
        this.eventTimes.push(arrived);
      }
    }
    else this.replies.push(value);
    this.wake();
  }

  onClose(closed: Closed): void {
    this.isClosed = true;
    this.markClosed(closed);
    this.wake();
  }

  onEvent(handler: (event: Json, arrived: number) => void): void {
    this.eventHandler = handler;
  }

  sendText(text: string): void {
    this.write(text);
  }

  sendBytes(bytes: Uint8Array | string): void {
    this.writeRaw(bytes);
  }

  async next(timeoutMs = 5000): Promise<Json> {
    await this.until(() => this.replies.length > 0, timeoutMs, 'a reply');
    return this.replies.shift();
  }

  async request(actions: unknown[], timeoutMs = 5000): Promise<Json[]> {
    this.sendText(JSON.stringify(actions));
    return (await this.next(timeoutMs)) as Json[];
  }

  async one(action: Record<string, unknown>): Promise<Json> {
    const message = 'cid' in action ? action : { ...action, cid: `c${++cids}` };
    const [result] = await this.request([message]);
    return result;
  }

  async waitForEvents(count: number, timeoutMs = 5000): Promise<Json[]> {
    await this.until(() => this.events.length >= count, timeoutMs, `${count} events (have ${this.events.length})`);
    return this.events.slice(0, count);
  }

  async close(): Promise<void> {
    if (!this.isClosed) this.end();
    await this.closed;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private async until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (this.isClosed && !ready()) throw new Error(`connection closed while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

export function wsUrl(httpUrl: string, path = '/v1/ws'): string {
  return httpUrl.replace(/^http/, 'ws') + path;
}

/** Opens a WebSocket to `/v1/ws` (or `path`); with `token`, authenticates and checks the success reply. */
export async function connectWs(httpUrl: string, token?: string, path = '/v1/ws'): Promise<V1Client> {
  const ws = new WebSocket(wsUrl(httpUrl, path));
  const client = new Client(
    'ws',
    (text) => ws.send(text),
    (bytes) => ws.send(bytes),
    () => ws.close(1000),
  );
  ws.on('message', (data: Buffer) => client.onMessage(data.toString('utf8')));
  ws.on('close', (code, reason) => client.onClose({ code, reason: reason.toString() }));
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  if (token !== undefined) await authenticate(client, token);
  return client;
}

/** Opens a TCP connection; with `token`, authenticates and checks the success reply. */
export async function connectTcp(port: number, token?: string): Promise<V1Client & { socket: Socket }> {
  const socket = netConnect({ port, host: '127.0.0.1', noDelay: true });
  let buffered = '';
  const client = new Client(
    'tcp',
    (text) => socket.write(text + '\n'),
    (bytes) => socket.write(bytes),
    () => socket.end(),
  );
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      client.onMessage(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
    }
  });
  socket.on('close', () => client.onClose({ code: null, reason: '' }));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  if (token !== undefined) await authenticate(client, token);
  return Object.assign(client, { socket });
}

export function connectV1(transport: V1Transport, server: { httpUrl: string; tcpPort: number }, token?: string): Promise<V1Client> {
  return transport === 'ws' ? connectWs(server.httpUrl, token) : connectTcp(server.tcpPort, token);
}

async function authenticate(client: V1Client, token: string): Promise<void> {
  recordSecret(token);
  client.sendText(`Bearer ${token}`);
  const reply = await client.next();
  const first: Json = Array.isArray(reply) ? reply[0] : undefined;
  if (first?.typ !== 'sys' || first?.act !== 'aut' || first?.res !== 'suc') {
    throw new Error(`authentication failed: ${JSON.stringify(reply)}`);
  }
}

/** POSTs messages to `/v1/http` (or `path`); returns the status and the parsed body. */
export async function postV1(
  httpUrl: string,
  token: string | null,
  body: unknown,
  headers: Record<string, string> = {},
  path = '/v1/http',
): Promise<{ status: number; json: Json }> {
  recordSecret(token);
  const res = await fetch(httpUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}
