/**
 * An object's data as SQLite JSONB (schema.ts version 5: `objects.data` holds JSONB),
 * encoded in JavaScript: the bytes SQLite's jsonb() makes of JSON.stringify's text,
 * without the text. A write used to format the text and have SQLite parse it again;
 * encoding directly skips both (the text is made only when the full-text index needs it).
 *
 * JSONB (https://sqlite.org/jsonb.html): each element is a header, whose first byte holds
 * the type in its low four bits and the payload size in its high four (0–11 the size
 * itself; 12, 13, 14, 15: the size follows in 1, 2, 4, 8 bytes, big-endian), then the
 * payload. Numbers are their JSON text (INT for an integer's digits, FLOAT otherwise);
 * strings their text without quotes (TEXT when it has no escape, TEXTJ with JSON's
 * escapes); an object's payload is its keys and values, each an element, in order, an
 * array's its elements. Data is an object of strings, numbers, booleans and nested objects
 * and arrays, which may hold null too (domain/types.ts Data).
 */
import type { Data } from '../../domain/types.js';

const NULL = 0;
const TRUE = 1;
const FALSE = 2;
const INT = 3;
const FLOAT = 5;
const TEXT = 7;
const TEXTJ = 8;
const ARRAY = 11;
const OBJECT = 12;

/** The most header bytes an element needs (a size of up to 2^32 − 1 bytes). */
const MAX_HEADER = 5;

/** Where encodeData writes; grown when a value does not fit. */
let scratch = Buffer.alloc(4096);

/** The header of an element of this type and payload size, at `at`; returns where the payload starts. */
function writeHeader(out: Buffer, at: number, type: number, size: number): number {
  if (size <= 11) {
    out[at] = (size << 4) | type;
    return at + 1;
  }
  if (size <= 0xff) {
    out[at] = (12 << 4) | type;
    out[at + 1] = size;
    return at + 2;
  }
  if (size <= 0xffff) {
    out[at] = (13 << 4) | type;
    out.writeUInt16BE(size, at + 1);
    return at + 3;
  }
  out[at] = (14 << 4) | type;
  out.writeUInt32BE(size, at + 1);
  return at + 5;
}

/** A string element at `at` (room checked by the caller: at most MAX_HEADER + 6 bytes per UTF-16 unit); returns its end. */
function writeString(out: Buffer, at: number, text: string): number {
  const length = text.length;
  let ascii = true;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    // Plain ASCII needs no escape: '"' (34), '\' (92) and controls do.
    if (c < 0x20 || c === 34 || c === 92 || c >= 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    let p = writeHeader(out, at, TEXT, length);
    for (let i = 0; i < length; i++) out[p++] = text.charCodeAt(i);
    return p;
  }
  // JSON.stringify's text without its quotes: escapes as it makes them (lone surrogates too).
  const payload = JSON.stringify(text).slice(1, -1);
  const size = Buffer.byteLength(payload);
  const p = writeHeader(out, at, payload.includes('\\') ? TEXTJ : TEXT, size);
  return p + out.write(payload, p, 'utf8');
}

/** A number element (JSON's text of a finite number: digits only for an integer below 1e21). */
function writeNumber(out: Buffer, at: number, value: number): number {
  const text = String(value);
  let type = INT;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 48 || c > 57) && !(c === 45 && i === 0)) {
      type = FLOAT;
      break;
    }
  }
  let p = writeHeader(out, at, type, text.length);
  for (let i = 0; i < text.length; i++) out[p++] = text.charCodeAt(i);
  return p;
}

/** The most bytes the element of a value may take (UTF-8 and JSON escapes of every string included). */
function valueBound(value: unknown): number {
  if (typeof value === 'string') return MAX_HEADER + 6 * value.length;
  if (Array.isArray(value)) {
    let bytes = MAX_HEADER;
    for (const item of value as unknown[]) bytes += valueBound(item);
    return bytes;
  }
  if (typeof value === 'object' && value !== null) return objectBound(value as Record<string, unknown>);
  return 32;
}

/** The most bytes an object's element may take. */
function objectBound(object: Record<string, unknown>): number {
  let bytes = MAX_HEADER;
  for (const key in object) bytes += MAX_HEADER + 6 * key.length + valueBound(object[key]);
  return bytes;
}

/** Bytes of the smallest header for a payload of `size` bytes. */
function headerBytes(size: number): number {
  return size <= 11 ? 1 : size <= 0xff ? 2 : size <= 0xffff ? 3 : 5;
}

/** The payload of an object (keys and values in order) at `at`; returns its end. */
function writeMembers(out: Buffer, at: number, object: Record<string, unknown>): number {
  let p = at;
  for (const key in object) {
    p = writeString(out, p, key);
    p = writeValue(out, p, object[key], key);
  }
  return p;
}

/**
 * A nested object or array at `at`: its payload is written after room for the largest
 * header, then moved down next to its header when that is smaller (JSONB as SQLite makes
 * it uses the smallest header). Returns its end.
 */
function writeContainer(out: Buffer, at: number, value: object): number {
  const start = at + MAX_HEADER;
  let end = start;
  if (Array.isArray(value)) for (const item of value as unknown[]) end = writeValue(out, end, item, '');
  else end = writeMembers(out, start, value as Record<string, unknown>);
  const size = end - start;
  const payloadAt = at + headerBytes(size);
  if (payloadAt < start) out.copyWithin(payloadAt, start, end);
  writeHeader(out, at, Array.isArray(value) ? ARRAY : OBJECT, size);
  return payloadAt + size;
}

/** One value's element at `at`; `key` names the data key in the error for a value validated data never holds. */
function writeValue(out: Buffer, at: number, value: unknown, key: string): number {
  if (typeof value === 'string') return writeString(out, at, value);
  if (typeof value === 'number' && Number.isFinite(value)) return writeNumber(out, at, value);
  if (typeof value === 'boolean') {
    out[at] = value ? TRUE : FALSE;
    return at + 1;
  }
  if (value === null) {
    out[at] = NULL;
    return at + 1;
  }
  if (typeof value === 'object') return writeContainer(out, at, value);
  // Validated data holds nothing else; anything else fails the write rather than being stored.
  throw new TypeError(`data value of ${JSON.stringify(key)} is not JSON (a string, finite number, boolean, null, object or array)`);
}

/**
 * The JSONB of data, as jsonb(JSON.stringify(data)) gives it. The result is a view of a
 * shared buffer, valid until the next call: bind it to a statement at once (better-sqlite3
 * copies what it binds) and keep no reference to it.
 */
export function encodeData(data: Data): Buffer {
  // Top-level scalars inline, as flat data (the common case) is all there is to most writes.
  let need = MAX_HEADER;
  for (const key in data) {
    const value = data[key];
    need += 2 * MAX_HEADER + 6 * key.length + (typeof value === 'string' ? 6 * value.length : typeof value === 'object' ? valueBound(value) : 32);
  }
  if (need > scratch.length) scratch = Buffer.alloc(Math.max(need, scratch.length * 2));
  const out = scratch;
  // The payload first, after room for the object's largest header; the header then
  // goes right before it.
  const start = MAX_HEADER;
  let at = start;
  for (const key in data) {
    const value: unknown = data[key];
    at = writeString(out, at, key);
    if (typeof value === 'string') at = writeString(out, at, value);
    else if (typeof value === 'number' && Number.isFinite(value)) at = writeNumber(out, at, value);
    else if (typeof value === 'boolean') out[at++] = value ? TRUE : FALSE;
    else at = writeValue(out, at, value, key);
  }
  const size = at - start;
  const header = headerBytes(size);
  writeHeader(out, start - header, OBJECT, size);
  return out.subarray(start - header, at);
}
