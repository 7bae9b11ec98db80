/**
 * The one load-generator connection of the peers bench: a raw socket (node:net) that writes
 * pre-encoded requests as they come and hands the decoded replies back in order, so any
 * number of requests may be in flight (pipelining). Every system (locus v1 and HTTP, RESP,
 * the PostgreSQL wire protocol) differs only in its `ReplyDecoder`.
 */
import { connect, type Socket } from 'node:net';

/** Turns a byte stream into replies; `feed` calls `emit` once per complete reply, in order. */
export interface ReplyDecoder<T> {
  feed(chunk: Buffer, emit: (reply: T) => void): void;
}

interface Waiting<T> {
  count: number;
  replies: T[];
  resolve: (replies: T[]) => void;
  reject: (error: Error) => void;
}

export class PipelinedConnection<T> {
  private readonly waiting: (Waiting<T> | undefined)[] = [];
  private head = 0;
  private failure: Error | null = null;

  private constructor(
    private readonly socket: Socket,
    private readonly decoder: ReplyDecoder<T>,
  ) {
    socket.on('data', (chunk: Buffer) => {
      try {
        decoder.feed(chunk, (reply) => this.deliver(reply));
      } catch (error) {
        this.fail(error instanceof Error ? error : new Error(String(error)));
        socket.destroy();
      }
    });
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Connects to 127.0.0.1:`port` with Nagle's algorithm off (each request leaves at once). */
  static open<T>(port: number, decoder: ReplyDecoder<T>): Promise<PipelinedConnection<T>> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', noDelay: true });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new PipelinedConnection(socket, decoder));
      });
      socket.once('error', reject);
    });
  }

  /** Writes `bytes`, which hold `count` requests, and resolves with their `count` replies. */
  send(bytes: Buffer | string, count = 1): Promise<T[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (count === 0) {
      this.socket.write(bytes);
      return Promise.resolve([]);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ count, replies: [], resolve, reject });
      this.socket.write(bytes);
    });
  }

  /** Sends one request and resolves with its reply. */
  async request(bytes: Buffer | string): Promise<T> {
    const [reply] = await this.send(bytes, 1);
    return reply as T;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) resolve();
      else {
        this.socket.once('close', () => resolve());
        this.socket.end();
      }
    });
  }

  private deliver(reply: T): void {
    const entry = this.waiting[this.head];
    if (entry === undefined) throw new Error('a reply that no request asked for');
    entry.replies.push(reply);
    if (entry.replies.length < entry.count) return;
    this.waiting[this.head] = undefined;
    this.head++;
    // Drops answered entries now and then instead of shifting the array per reply.
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    entry.resolve(entry.replies);
  }

  private fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (let i = this.head; i < this.waiting.length; i++) this.waiting[i]?.reject(error);
    this.waiting.length = 0;
    this.head = 0;
  }
}

/** Keeps the unconsumed tail of a stream between chunks. */
export class ByteBuffer {
  private bytes: Buffer = Buffer.alloc(0);
  private at = 0;

  append(chunk: Buffer): void {
    this.bytes = this.at < this.bytes.length ? Buffer.concat([this.bytes.subarray(this.at), chunk]) : chunk;
    this.at = 0;
  }

  get buffer(): Buffer {
    return this.bytes;
  }

  get offset(): number {
    return this.at;
  }

  consumeTo(offset: number): void {
    this.at = offset;
  }
}
