/**
 * A minimal PostgreSQL client over the frontend/backend protocol version 3: the startup
 * message (trust authentication only), simple queries ('Q') and the backend messages they
 * bring (RowDescription, DataRow, CommandComplete, ErrorResponse, ReadyForQuery). Values come
 * back as text. Queries may be pipelined: the server answers them in order, each ending with
 * ReadyForQuery. No client library, like every system of the peers bench (peer-pipeline.ts).
 */
import { ByteBuffer, PipelinedConnection, type ReplyDecoder } from './peer-pipeline.js';

const protocolVersion = 196_608; // 3.0

/** The startup message: protocol 3.0, then user and database as name/value pairs. */
export function encodeStartup(user: string, database: string): Buffer {
  const pairs = Buffer.from(`user\0${user}\0database\0${database}\0client_encoding\0UTF8\0\0`, 'utf8');
  const out = Buffer.alloc(8 + pairs.length);
  out.writeInt32BE(out.length, 0);
  out.writeInt32BE(protocolVersion, 4);
  pairs.copy(out, 8);
  return out;
}

/** A simple query: 'Q', the length, the SQL text and a NUL. */
export function encodeQuery(sql: string): Buffer {
  const text = Buffer.from(sql, 'utf8');
  const out = Buffer.alloc(1 + 4 + text.length + 1);
  out.write('Q', 0, 'latin1');
  out.writeInt32BE(4 + text.length + 1, 1);
  text.copy(out, 5);
  out[out.length - 1] = 0;
  return out;
}

export function encodeTerminate(): Buffer {
  const out = Buffer.alloc(5);
  out.write('X', 0, 'latin1');
  out.writeInt32BE(4, 1);
  return out;
}

/** A string literal of SQL: single quotes doubled (the server runs with standard_conforming_strings). */
export const sqlText = (text: string): string => `'${text.replace(/'/g, "''")}'`;

export interface BackendMessage {
  /** The type byte as a character ('T', 'D', 'Z', ...). */
  type: string;
  body: Buffer;
}

/** Splits a byte stream into backend messages: a type byte, a length that counts itself, the body. */
export class BackendMessageSplitter {
  private readonly pending = new ByteBuffer();

  feed(chunk: Buffer, emit: (message: BackendMessage) => void): void {
    this.pending.append(chunk);
    const buf = this.pending.buffer;
    let at = this.pending.offset;
    while (buf.length - at >= 5) {
      const length = buf.readInt32BE(at + 1);
      if (length < 4) throw new Error(`bad backend message length ${length}`);
      if (buf.length - at < 1 + length) break;
      emit({ type: String.fromCharCode(buf[at] as number), body: buf.subarray(at + 5, at + 1 + length) });
      at += 1 + length;
    }
    this.pending.consumeTo(at);
  }
}

/** Reads the NUL-terminated string at `at`: its text and the offset after the NUL. */
function cString(body: Buffer, at: number): { text: string; end: number } {
  const nul = body.indexOf(0, at);
  if (nul === -1) throw new Error('a string without its NUL');
  return { text: body.toString('utf8', at, nul), end: nul + 1 };
}

/** RowDescription: the column names. */
export function parseRowDescription(body: Buffer): string[] {
  const count = body.readInt16BE(0);
  const names: string[] = [];
  let at = 2;
  for (let i = 0; i < count; i++) {
    const name = cString(body, at);
    names.push(name.text);
    at = name.end + 18; // table oid, column number, type oid, type size, type modifier, format
  }
  return names;
}

/** DataRow: each column's text, null for SQL NULL (length -1). */
export function parseDataRow(body: Buffer): (string | null)[] {
  const count = body.readInt16BE(0);
  const values: (string | null)[] = [];
  let at = 2;
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(at);
    at += 4;
    if (length < 0) values.push(null);
    else {
      values.push(body.toString('utf8', at, at + length));
      at += length;
    }
  }
  return values;
}

/** ErrorResponse and NoticeResponse: fields as (code letter → text); 'M' is the message, 'C' the SQLSTATE. */
export function parseErrorFields(body: Buffer): Record<string, string> {
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const code = String.fromCharCode(body[at] as number);
    const value = cString(body, at + 1);
    fields[code] = value.text;
    at = value.end;
  }
  return fields;
}

/** What one simple query gave: the rows of its statements and the last command tag, or the error. */
export interface PgResult {
  columns: string[];
  rows: (string | null)[][];
  command: string;
  error: string | null;
}

/**
 * Gathers backend messages into one PgResult per ReadyForQuery: the answer to a simple query,
 * or to the startup message (authentication, parameters, backend key).
 */
export class PgResultDecoder implements ReplyDecoder<PgResult> {
  private readonly splitter = new BackendMessageSplitter();
  private current: PgResult = PgResultDecoder.empty();

  private static empty(): PgResult {
    return { columns: [], rows: [], command: '', error: null };
  }

  feed(chunk: Buffer, emit: (reply: PgResult) => void): void {
    this.splitter.feed(chunk, (message) => {
      const result = this.current;
      switch (message.type) {
        case 'T':
          result.columns = parseRowDescription(message.body);
          break;
        case 'D':
          result.rows.push(parseDataRow(message.body));
          break;
        case 'C':
          result.command = cString(message.body, 0).text;
          break;
        case 'E': {
          const fields = parseErrorFields(message.body);
          // A startup error ends the connection without ReadyForQuery.
          result.error ??= `${fields.S ?? 'ERROR'} ${fields.C ?? ''}: ${fields.M ?? 'no message'}`;
          break;
        }
        case 'R': {
          const method = message.body.readInt32BE(0);
          if (method !== 0) result.error ??= `authentication method ${method} asked; only trust is supported`;
          break;
        }
        case 'Z':
          this.current = PgResultDecoder.empty();
          emit(result);
          break;
        default:
          // ParameterStatus, BackendKeyData, NoticeResponse, EmptyQueryResponse: nothing to keep.
          break;
      }
    });
  }
}

export class PgConnection {
  private constructor(private readonly connection: PipelinedConnection<PgResult>) {}

  /** Connects to 127.0.0.1:`port` and signs in (the server must trust loopback connections). */
  static async open(port: number, user: string, database: string): Promise<PgConnection> {
    const connection = await PipelinedConnection.open(port, new PgResultDecoder());
    const started = await connection.request(encodeStartup(user, database));
    if (started.error !== null) throw new Error(`PostgreSQL startup: ${started.error}`);
    return new PgConnection(connection);
  }

  /** Runs a simple query; an error reply rejects with the server's message. */
  async query(sql: string): Promise<PgResult> {
    return PgConnection.check(await this.connection.request(encodeQuery(sql)), sql);
  }

  /** Pre-encoded queries, pipelined; resolves once every one has answered, rejects on the first error. */
  async sendEncoded(bytes: Buffer, count: number): Promise<PgResult[]> {
    const results = await this.connection.send(bytes, count);
    for (const result of results) PgConnection.check(result, '(pipelined query)');
    return results;
  }

  async close(): Promise<void> {
    await this.connection.send(encodeTerminate(), 0).catch(() => undefined);
    await this.connection.close();
  }

  private static check(result: PgResult, sql: string): PgResult {
    if (result.error !== null) throw new Error(`PostgreSQL: ${result.error} (in ${sql.slice(0, 200)})`);
    return result;
  }
}
