/**
 * The peers bench's raw clients of locus: v1 over TCP (one JSON frame per line, replies in
 * order) and HTTP/1.1 with keep-alive for REST v2, both on peer-pipeline.ts like the clients of
 * every other system in that bench.
 */
import { ByteBuffer, PipelinedConnection, type ReplyDecoder } from './peer-pipeline.js';

/** v1 over TCP: every line is one frame (a reply, as no subscription pushes events here). */
export class LineDecoder implements ReplyDecoder<string> {
  private readonly pending = new ByteBuffer();

  feed(chunk: Buffer, emit: (line: string) => void): void {
    this.pending.append(chunk);
    const buf = this.pending.buffer;
    let at = this.pending.offset;
    for (let end = buf.indexOf(10, at); end !== -1; end = buf.indexOf(10, at)) {
      emit(buf.toString('utf8', at, end));
      at = end + 1;
    }
    this.pending.consumeTo(at);
  }
}

export interface HttpReply {
  status: number;
  body: string;
}

/** The end of the chunked body starting at `at`, with its bytes, or null when not all has arrived. */
function chunkedBody(buf: Buffer, at: number): { body: Buffer; end: number } | null {
  const parts: Buffer[] = [];
  let cursor = at;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', cursor);
    if (lineEnd === -1) return null;
    const size = parseInt(buf.toString('latin1', cursor, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    const dataStart = lineEnd + 2;
    if (size === 0) {
      // No trailers are expected: the last chunk is followed by an empty line.
      if (buf.length < dataStart + 2) return null;
      return { body: Buffer.concat(parts), end: dataStart + 2 };
    }
    if (buf.length < dataStart + size + 2) return null;
    parts.push(buf.subarray(dataStart, dataStart + size));
    cursor = dataStart + size + 2;
  }
}

/** HTTP/1.1 responses, one after another on a kept-alive connection (Content-Length or chunked). */
export class HttpResponseDecoder implements ReplyDecoder<HttpReply> {
  private readonly pending = new ByteBuffer();

  feed(chunk: Buffer, emit: (reply: HttpReply) => void): void {
    this.pending.append(chunk);
    const buf = this.pending.buffer;
    let at = this.pending.offset;
    for (;;) {
      const headEnd = buf.indexOf('\r\n\r\n', at);
      if (headEnd === -1) break;
      const head = buf.toString('latin1', at, headEnd).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1]);
      if (Number.isNaN(status)) throw new Error(`not an HTTP response: ${head[0] ?? ''}`);
      const header = (name: string): string | undefined =>
        head.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
      const bodyStart = headEnd + 4;
      if (header('transfer-encoding')?.toLowerCase() === 'chunked') {
        const body = chunkedBody(buf, bodyStart);
        if (body === null) break;
        emit({ status, body: body.body.toString('utf8') });
        at = body.end;
      } else {
        const length = Number(header('content-length') ?? '0');
        if (buf.length < bodyStart + length) break;
        emit({ status, body: buf.toString('utf8', bodyStart, bodyStart + length) });
        at = bodyStart + length;
      }
    }
    this.pending.consumeTo(at);
  }
}

/** A GET request with a bearer token, kept alive. */
export function encodeGet(path: string, token: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: keep-alive\r\n\r\n`;
}

export class LocusHttp {
  private constructor(
    private readonly connection: PipelinedConnection<HttpReply>,
    private readonly token: string,
  ) {}

  static async open(port: number, token: string): Promise<LocusHttp> {
    return new LocusHttp(await PipelinedConnection.open(port, new HttpResponseDecoder()), token);
  }

  /** GETs `path` and parses the JSON body; anything but a 200 throws. */
  async getJson(path: string): Promise<unknown> {
    const reply = await this.connection.request(encodeGet(path, this.token));
    if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status} ${reply.body.slice(0, 300)}`);
    return JSON.parse(reply.body) as unknown;
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

/** A v1 TCP connection, signed in with `token`. */
export class LocusV1 {
  private constructor(private readonly connection: PipelinedConnection<string>) {}

  static async open(port: number, token: string): Promise<LocusV1> {
    const connection = await PipelinedConnection.open(port, new LineDecoder());
    const reply = await connection.request(`Bearer ${token}\n`);
    if (!reply.includes('"res":"suc"')) throw new Error(`v1 sign-in failed: ${reply.slice(0, 300)}`);
    return new LocusV1(connection);
  }

  /** Sends frames (each a JSON array on its own line, already encoded with its "\n"); every reply must be all `suc`. */
  async send(lines: string, count = 1): Promise<void> {
    const replies = await this.connection.send(lines, count);
    for (const reply of replies) {
      const results = JSON.parse(reply) as { res?: string }[];
      if (!Array.isArray(results) || !results.every((r) => r.res === 'suc')) throw new Error(`v1 write failed: ${reply.slice(0, 300)}`);
    }
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
