/**
 * Splits a TCP byte stream into lines: one message per line, `\n`-terminated, `\r\n`
 * accepted. Pure (no sockets): chunks go in, frames come out. Lines are cut on bytes
 * and decoded whole, so a UTF-8 character split across chunks arrives intact; a line
 * that is not valid UTF-8 is reported as such. A line longer than the limit is reported
 * as soon as the limit is passed (without waiting for its end), after which the framer
 * takes no more input: the connection is to be closed.
 */

export type Frame = { kind: 'line'; text: string } | { kind: 'invalid_utf8' } | { kind: 'too_long' };

const LF = 0x0a;
const CR = 0x0d;

export class LineFramer {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private failed = false;

  /** `maxLineBytes`: longest line, without its terminator. */
  constructor(private readonly maxLineBytes: number) {}

  /** Whether a line has begun and not ended. */
  get partial(): boolean {
    return this.pendingBytes > 0;
  }

  push(chunk: Uint8Array): Frame[] {
    if (this.failed) return [];
    const frames: Frame[] = [];
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end);
      start = end + 1;
      if (this.pendingBytes + piece.length > this.maxLineBytes + 1) return this.fail(frames);
      const frame = this.frame(this.take(piece));
      if (frame.kind === 'too_long') return this.fail(frames);
      frames.push(frame);
    }
    const rest = chunk.subarray(start);
    // +1: the line may still end in "\r", which is not part of it.
    if (this.pendingBytes + rest.length > this.maxLineBytes + 1) return this.fail(frames);
    if (rest.length > 0) {
      // Copied: the caller may reuse its buffer.
      this.pending.push(Uint8Array.prototype.slice.call(rest));
      this.pendingBytes += rest.length;
    }
    return frames;
  }

  /** The stream ended: an unfinished last line counts as a line. */
  end(): Frame[] {
    if (this.failed || this.pendingBytes === 0) return [];
    return [this.frame(this.take(new Uint8Array(0)))];
  }

  private take(last: Uint8Array): Uint8Array {
    if (this.pending.length === 0) return last;
    const parts = [...this.pending, last];
    const whole = new Uint8Array(this.pendingBytes + last.length);
    let at = 0;
    for (const part of parts) {
      whole.set(part, at);
      at += part.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    return whole;
  }

  private frame(bytes: Uint8Array): Frame {
    const line = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes;
    if (line.length > this.maxLineBytes) return { kind: 'too_long' };
    try {
      return { kind: 'line', text: this.decoder.decode(line) };
    } catch {
      return { kind: 'invalid_utf8' };
    }
  }

  private fail(frames: Frame[]): Frame[] {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    frames.push({ kind: 'too_long' });
    return frames;
  }
}
