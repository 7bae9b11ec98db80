/**
 * RESP (the Redis serialization protocol, version 2), as Redis and Tile38 speak it: commands
 * encoded as arrays of bulk strings, and a decoder of the replies that survives any split of
 * the stream into chunks. No client library: the peers bench measures the servers, and every
 * system gets the same kind of lean raw-socket client (peer-pipeline.ts).
 */
import { ByteBuffer, PipelinedConnection, type ReplyDecoder } from './peer-pipeline.js';

/** An error reply (`-ERR ...`): a value, so that one failed command of a pipeline is visible. */
export class RespError {
  constructor(readonly message: string) {}
}

export type RespValue = string | number | null | RespError | RespValue[];

/** One command as RESP bytes: `*<n>` then each argument as a bulk string (UTF-8 length). */
export function encodeCommand(args: readonly (string | number)[]): string {
  let out = `*${args.length}\r\n`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return out;
}

/** Several commands written at once (a pipeline). */
export function encodeCommands(commands: readonly (readonly (string | number)[])[]): string {
  return commands.map(encodeCommand).join('');
}

interface Parsed {
  value: RespValue;
  end: number;
}

/** One value at `start`, or null when the bytes there are not complete yet. */
function parseValue(buf: Buffer, start: number): Parsed | null {
  if (start >= buf.length) return null;
  const lineEnd = buf.indexOf('\r\n', start + 1);
  if (lineEnd === -1) return null;
  const type = buf[start];
  const line = buf.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: // '+'
      return { value: line, end: next };
    case 0x2d: // '-'
      return { value: new RespError(line), end: next };
    case 0x3a: // ':'
      return { value: Number(line), end: next };
    case 0x24: {
      // '$': a bulk string of <length> bytes, or null for -1
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return null;
      return { value: buf.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case 0x2a: {
      // '*': an array of <count> values, or null for -1
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parseValue(buf, at);
        if (item === null) return null;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`not a RESP reply: type byte ${String(type)} at offset ${start}`);
  }
}

export class RespDecoder implements ReplyDecoder<RespValue> {
  private readonly pending = new ByteBuffer();

  feed(chunk: Buffer, emit: (reply: RespValue) => void): void {
    this.pending.append(chunk);
    const buf = this.pending.buffer;
    let at = this.pending.offset;
    for (let parsed = parseValue(buf, at); parsed !== null; parsed = parseValue(buf, at)) {
      at = parsed.end;
      emit(parsed.value);
    }
    this.pending.consumeTo(at);
  }
}

export type RespConnection = PipelinedConnection<RespValue>;

export function openResp(port: number): Promise<RespConnection> {
  return PipelinedConnection.open(port, new RespDecoder());
}

/** The reply, unless it is an error reply (then thrown, naming what was sent). */
export function respOk(reply: RespValue, what: string): RespValue {
  if (reply instanceof RespError) throw new Error(`${what}: ${reply.message}`);
  return reply;
}
