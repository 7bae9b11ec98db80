/**
 * The wire codecs of the peers bench's load generator (test/support/peer-*.ts): RESP, the
 * PostgreSQL frontend/backend messages, HTTP/1.1 responses and v1 lines, each fed whole and in
 * every split a socket may deliver, and the pipelined connection over a real socket.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HttpResponseDecoder, LineDecoder, type HttpReply } from '../support/peer-locus-wire.js';
import { encodeQuery, encodeStartup, PgResultDecoder, sqlText, type PgResult } from '../support/peer-pg-wire.js';
import { PipelinedConnection, type ReplyDecoder } from '../support/peer-pipeline.js';
import { encodeCommand, encodeCommands, RespDecoder, RespError, type RespValue } from '../support/peer-resp.js';

/** Feeds `bytes` to a fresh decoder in pieces cut at `cuts` (offsets), returning every reply. */
function decodeSplit<T>(decoder: ReplyDecoder<T>, bytes: Buffer, cuts: readonly number[] = []): T[] {
  const out: T[] = [];
  let at = 0;
  for (const cut of [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b)) {
    decoder.feed(bytes.subarray(at, cut), (reply) => out.push(reply));
    at = cut;
  }
  decoder.feed(bytes.subarray(at), (reply) => out.push(reply));
  return out;
}

/** Every way of cutting `bytes` in two, and one byte at a time. */
function everySplit<T>(make: () => ReplyDecoder<T>, bytes: Buffer, check: (replies: T[]) => void): void {
  for (let cut = 0; cut <= bytes.length; cut++) check(decodeSplit(make(), bytes, [cut]));
  check(decodeSplit(make(), bytes, Array.from({ length: bytes.length }, (_v, i) => i)));
}

/** A RESP reply as a server writes it (the test's own encoder, independent of the decoder). */
function respReply(value: RespValue): string {
  if (value === null) return '$-1\r\n';
  if (value instanceof RespError) return `-${value.message}\r\n`;
  if (typeof value === 'number') return `:${value}\r\n`;
  if (typeof value === 'string') return `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
  return `*${value.length}\r\n${value.map(respReply).join('')}`;
}

const respValue: fc.Arbitrary<RespValue> = fc.letrec<{ value: RespValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'grapheme' }),
    fc.integer(),
    fc.constant(null),
    fc.stringMatching(/^[A-Za-z ]{1,20}$/).map((m) => new RespError(m)),
    fc.array(tie('value'), { maxLength: 4 }),
  ),
})).value;

describe('RESP', () => {
  it('encodes a command as an array of bulk strings with UTF-8 byte lengths', () => {
    assert.equal(encodeCommand(['GEOADD', 'fleet', 13.4, '52.5', 'Müller']), '*5\r\n$6\r\nGEOADD\r\n$5\r\nfleet\r\n$4\r\n13.4\r\n$4\r\n52.5\r\n$7\r\nMüller\r\n');
    assert.equal(encodeCommands([['PING'], ['GET', 'k']]), '*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n');
  });

  it('decodes every reply type in any split, bulk strings binary-safe and UTF-8 whole', () => {
    const bytes = Buffer.from('+OK\r\n-ERR wrong\r\n:42\r\n$4\r\na\r\nb\r\n$-1\r\n*2\r\n$7\r\nmüller\r\n*1\r\n:-1\r\n*-1\r\n*0\r\n', 'utf8');
    everySplit(
      () => new RespDecoder(),
      bytes,
      (replies) => assert.deepEqual(replies, ['OK', new RespError('ERR wrong'), 42, 'a\r\nb', null, ['müller', [-1]], null, []]),
    );
  });

  it('gives back any sequence of replies as a server wrote them, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(respValue, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(400)), (values, cuts) => {
        const bytes = Buffer.from(values.map(respReply).join(''), 'utf8');
        assert.deepEqual(decodeSplit(new RespDecoder(), bytes, cuts), values);
      }),
    );
  });

  it('refuses a stream that is not RESP', () => {
    assert.throws(() => decodeSplit(new RespDecoder(), Buffer.from('HTTP/1.1 200 OK\r\n')), /not a RESP reply/);
  });
});

/** A backend message: type byte, length counting itself, body. */
function backend(type: string, ...parts: (Buffer | string | number[])[]): Buffer {
  const body = Buffer.concat(parts.map((p) => (Array.isArray(p) ? Buffer.from(p) : typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
/** A RowDescription column: name, then table oid, column, type oid (text), size, modifier, format. */
const column = (name: string): Buffer => Buffer.concat([Buffer.from(`${name}\0`), int32(0), int16(0), int32(25), int16(-1), int32(-1), int16(0)]);
const cell = (text: string | null): Buffer => (text === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(text)), Buffer.from(text, 'utf8')]));
const ready = backend('Z', 'I');

describe('PostgreSQL wire protocol', () => {
  it('encodes the startup message: length, protocol 3.0, name/value pairs, a final NUL', () => {
    const bytes = encodeStartup('postgres', 'db');
    assert.equal(bytes.readInt32BE(0), bytes.length);
    assert.equal(bytes.readInt32BE(4), 196_608);
    assert.equal(bytes.subarray(8).toString('utf8'), 'user\0postgres\0database\0db\0client_encoding\0UTF8\0\0');
  });

  it("encodes a simple query with its UTF-8 length and NUL, and doubles a literal's quotes", () => {
    const bytes = encodeQuery(`SELECT ${sqlText("O'Müller")}`);
    assert.equal(bytes.toString('latin1', 0, 1), 'Q');
    assert.equal(bytes.readInt32BE(1), bytes.length - 1);
    assert.equal(bytes.subarray(5).toString('utf8'), "SELECT 'O''Müller'\0");
  });

  it('gathers the answer to a query (rows with NULLs and UTF-8) and the next one, in any split', () => {
    const bytes = Buffer.concat([
      backend('T', int16(2), column('id'), column('label')),
      backend('D', int16(2), cell('obj-1'), cell('Müllerberg Anna')),
      backend('D', int16(2), cell('obj-2'), cell(null)),
      backend('C', 'SELECT 2\0'),
      backend('N', 'SNOTICE\0Mhello\0\0'),
      ready,
      backend('C', 'UPDATE 1\0'),
      ready,
    ]);
    everySplit(
      () => new PgResultDecoder(),
      bytes,
      (results) =>
        assert.deepEqual(results, [
          { columns: ['id', 'label'], rows: [['obj-1', 'Müllerberg Anna'], ['obj-2', null]], command: 'SELECT 2', error: null },
          { columns: [], rows: [], command: 'UPDATE 1', error: null },
        ] satisfies PgResult[]),
    );
  });

  it('turns an ErrorResponse into the error of its query, with severity, SQLSTATE and message', () => {
    const bytes = Buffer.concat([backend('E', 'SERROR\0C42P01\0Mrelation "nope" does not exist\0\0'), ready]);
    const [result] = decodeSplit(new PgResultDecoder(), bytes);
    assert.equal(result?.error, 'ERROR 42P01: relation "nope" does not exist');
  });

  it('accepts trust sign-in and refuses any authentication it would have to answer', () => {
    const trusted = Buffer.concat([backend('R', int32(0)), backend('S', 'server_version\0' + '15\0'), backend('K', int32(1), int32(2)), ready]);
    assert.deepEqual(decodeSplit(new PgResultDecoder(), trusted), [{ columns: [], rows: [], command: '', error: null }]);
    const md5 = Buffer.concat([backend('R', int32(5), [1, 2, 3, 4]), ready]);
    assert.match(decodeSplit(new PgResultDecoder(), md5)[0]?.error ?? '', /authentication method 5/);
  });

  it('refuses a message length below its own four bytes', () => {
    assert.throws(() => decodeSplit(new PgResultDecoder(), Buffer.from([0x5a, 0, 0, 0, 2, 0x49])), /bad backend message length 2/);
  });
});

describe('locus wire (HTTP/1.1 responses, v1 lines)', () => {
  it('decodes kept-alive responses with Content-Length and chunked bodies, in any split', () => {
    const bytes = Buffer.from(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a":"ü"}' +
        'HTTP/1.1 400 Bad Request\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{"e"\r\n3\r\n:1}\r\n0\r\n\r\n' +
        'HTTP/1.1 204 No Content\r\n\r\n',
      'utf8',
    );
    everySplit(
      () => new HttpResponseDecoder(),
      bytes,
      (replies) =>
        assert.deepEqual(replies, [
          { status: 200, body: '{"a":"ü"}' },
          { status: 400, body: '{"e":1}' },
          { status: 204, body: '' },
        ] satisfies HttpReply[]),
    );
  });

  it('refuses a stream that is not HTTP', () => {
    assert.throws(() => decodeSplit(new HttpResponseDecoder(), Buffer.from('+OK\r\n\r\n')), /not an HTTP response/);
  });

  it('splits v1 frames at newlines, keeping a partial line for the next chunk', () => {
    everySplit(
      () => new LineDecoder(),
      Buffer.from('[{"res":"suc"}]\n[{"lab":"Müller"}]\n', 'utf8'),
      (lines) => assert.deepEqual(lines, ['[{"res":"suc"}]', '[{"lab":"Müller"}]']),
    );
  });
});

describe('pipelined connection', () => {
  /** A line server that answers each line upper-cased, and closes on `bye`. */
  async function lineServer(): Promise<{ server: Server; port: number }> {
    const server = createServer((socket) => {
      let pending = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        pending += chunk;
        for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 1);
          if (line === 'bye') socket.destroy();
          else socket.write(`${line.toUpperCase()}\n`);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
  }

  it('hands replies back in order to the requests in flight, several per send', async () => {
    const { server, port } = await lineServer();
    try {
      const c = await PipelinedConnection.open(port, new LineDecoder());
      const [a, b, one] = await Promise.all([c.send('a\nb\n', 2), c.send('c\nd\ne\n', 3), c.request('f\n')]);
      assert.deepEqual([a, b, one], [['A', 'B'], ['C', 'D', 'E'], 'F']);
      await c.close();
    } finally {
      server.close();
    }
  });

  it('rejects the requests in flight and later ones when the server closes the connection', async () => {
    const { server, port } = await lineServer();
    try {
      const c = await PipelinedConnection.open(port, new LineDecoder());
      await assert.rejects(c.send('bye\n', 1), /connection closed/);
      await assert.rejects(c.request('again\n'), /connection closed/);
    } finally {
      server.close();
    }
  });
});
