/** The TCP line framer, without sockets: split and merged chunks, CRLF, UTF-8, limits. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LineFramer, type Frame } from '../../internal/transport/tcp/line-framer.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const lines = (frames: Frame[]): (string | null)[] => frames.map((f) => (f.kind === 'line' ? f.text : null));

function feed(framer: LineFramer, chunks: (Uint8Array | string)[]): Frame[] {
  return chunks.flatMap((chunk) => framer.push(typeof chunk === 'string' ? bytes(chunk) : chunk));
}

describe('LineFramer', () => {
  it('returns one line per newline and keeps an unfinished line for later', () => {
    const framer = new LineFramer(1024);
    assert.deepEqual(lines(framer.push(bytes('[1]\n[2]\n[3'))), ['[1]', '[2]']);
    assert.deepEqual(lines(framer.push(bytes(']\n'))), ['[3]']);
    assert.deepEqual(framer.push(bytes('')), []);
  });

  it('joins a line split over many chunks', () => {
    const framer = new LineFramer(1024);
    assert.deepEqual(lines(feed(framer, ['Bea', 'rer ', 'abc', '\n'])), ['Bearer abc']);
  });

  it('accepts \\r\\n, also when \\r and \\n arrive in different chunks', () => {
    const framer = new LineFramer(1024);
    assert.deepEqual(lines(feed(framer, ['a\r\nb\r', '\nc\n'])), ['a', 'b', 'c']);
  });

  it('returns empty lines as empty text (the transport skips them)', () => {
    assert.deepEqual(lines(new LineFramer(16).push(bytes('\n\r\nx\n'))), ['', '', 'x']);
  });

  it('decodes a UTF-8 character split across chunks intact', () => {
    const encoded = bytes('"Zürich 🚚"\n');
    for (let cut = 1; cut < encoded.length; cut++) {
      const framer = new LineFramer(1024);
      const frames = feed(framer, [encoded.subarray(0, cut), encoded.subarray(cut)]);
      assert.deepEqual(lines(frames), ['"Zürich 🚚"'], `cut at byte ${cut}`);
    }
  });

  it('reports a line that is not valid UTF-8 and goes on with the next', () => {
    const framer = new LineFramer(1024);
    const frames = framer.push(Uint8Array.from([0x5b, 0xff, 0x5d, 0x0a, 0x5b, 0x5d, 0x0a]));
    assert.deepEqual(frames, [{ kind: 'invalid_utf8' }, { kind: 'line', text: '[]' }]);
  });

  it('does not keep a reference to the caller buffer', () => {
    const framer = new LineFramer(1024);
    const chunk = Buffer.from('abc');
    framer.push(chunk);
    chunk.fill(0x7a);
    assert.deepEqual(lines(framer.push(bytes('\n'))), ['abc']);
  });

  it('accepts a line of exactly the limit, with or without \\r', () => {
    assert.deepEqual(lines(new LineFramer(4).push(bytes('abcd\n'))), ['abcd']);
    assert.deepEqual(lines(new LineFramer(4).push(bytes('abcd\r\n'))), ['abcd']);
    assert.deepEqual(lines(feed(new LineFramer(4), ['ab', 'cd', '\r', '\n'])), ['abcd']);
  });

  it('reports a line over the limit as soon as it passes it, then takes nothing more', () => {
    const framer = new LineFramer(4);
    assert.deepEqual(framer.push(bytes('ok\nabcd')), [{ kind: 'line', text: 'ok' }]);
    assert.deepEqual(framer.push(bytes('ef')), [{ kind: 'too_long' }]);
    assert.deepEqual(framer.push(bytes('\n[]\n')), []);
    assert.deepEqual(framer.end(), []);
  });

  it('reports an over-long line that ends within the chunk after the lines before it', () => {
    assert.deepEqual(new LineFramer(4).push(bytes('a\nabcdef\nb\n')), [{ kind: 'line', text: 'a' }, { kind: 'too_long' }]);
    assert.deepEqual(new LineFramer(4).push(bytes('abcde\r\n')), [{ kind: 'too_long' }]);
  });

  it('end() turns an unfinished last line into a line', () => {
    const framer = new LineFramer(64);
    framer.push(bytes('[1]\n[2]'));
    assert.deepEqual(lines(framer.end()), ['[2]']);
    assert.deepEqual(framer.end(), []);
  });

  it('property: any split of a stream gives the same lines as the whole', () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ''));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), (texts, cuts, crlf) => {
        const stream = bytes(texts.map((t) => t + (crlf ? '\r\n' : '\n')).join(''));
        const points = [...new Set(cuts.map((c) => (stream.length === 0 ? 0 : c % stream.length)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const p of points) {
          chunks.push(stream.subarray(from, p));
          from = p;
        }
        chunks.push(stream.subarray(from));
        assert.deepEqual(lines(feed(new LineFramer(1024), chunks)), texts);
      }),
    );
  });
});
