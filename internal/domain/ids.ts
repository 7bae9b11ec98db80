/**
 * Identifier validation, plus the small helpers every input parser of internal/domain
 * shares (describing values, naming paths, reading JSON objects). Pure: no I/O.
 */
import { invalid, type ErrorCode } from '../errors.js';

/** Longest quoted input echoed back in an error message, in code points. */
const QUOTE_LIMIT = 64;

/** A string for error messages: JSON-quoted, cut to 64 characters (marked with …). */
export function quote(text: string): string {
  if (text.length <= QUOTE_LIMIT) return JSON.stringify(text);
  const head = Array.from(text.slice(0, QUOTE_LIMIT * 2))
    .slice(0, QUOTE_LIMIT)
    .join('');
  return head.length === text.length ? JSON.stringify(text) : `${JSON.stringify(head)}…`;
}

/** A short description of what was received, for "(got …)" in messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${quote(value)}`;
    case 'number':
      return String(value);
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** The path of `key` inside `where` ('' is the top level): `location.latitude`, `data["a b"]`. */
export function keyPath(where: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return where === '' ? key : `${where}.${key}`;
  return `${where}[${quote(key)}]`;
}

/** How a container is named in "unknown key ... in <container>". */
export function containerName(where: string): string {
  return where === '' ? 'the request body' : where;
}

/** A plain JSON object: not null, not an array, not a class instance. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The own entries of a JSON object. A key whose value is `undefined` (impossible in JSON,
 * possible when a caller builds the object in code) counts as absent.
 */
export function entriesOf(value: Record<string, unknown>): [string, unknown][] {
  return Object.entries(value).filter(([, v]) => v !== undefined);
}

/** Reads a JSON object, or throws `<where> must be a JSON object (got ...)`. */
export function requireObject(value: unknown, where: string, code: ErrorCode): Record<string, unknown> {
  if (isJsonObject(value)) return value;
  throw invalid(`${where === '' ? 'the request body' : where} must be a JSON object (got ${describe(value)})`, code);
}

/** Throws for the first key of `value` not in `allowed`. */
export function rejectUnknownKeys(
  value: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  where: string,
  code: ErrorCode,
  hint = '',
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) throw invalid(`unknown key ${quote(key)} in ${containerName(where)}${hint}`, code);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/** True when the string holds an unpaired UTF-16 surrogate (it has no UTF-8 form). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** Index of the first C0/DEL/C1 control character, or -1. */
export function controlCharIndex(text: string): number {
  const match = CONTROL.exec(text);
  return match === null ? -1 : match.index;
}

/** Length in UTF-8 bytes of a string without lone surrogates. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4; // a surrogate pair is one code point of 4 bytes
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Largest identifier, and largest data key, in UTF-8 bytes. */
export const MAX_ID_BYTES = 256;

/**
 * Checks a name (identifier or data key): 1–256 UTF-8 bytes, no control characters, no
 * lone surrogates. `subject` starts the message (`object id`, `objects[2].id`, `data key "x"`).
 */
export function checkName(value: string, subject: string | (() => string), code: ErrorCode): void {
  // The subject is only needed for a message: a function makes it then.
  const name = (): string => (typeof subject === 'string' ? subject : subject());
  if (value.length === 0) throw invalid(`${name()} must not be empty`, code);
  // Every UTF-16 code unit is at least one UTF-8 byte, so a long string fails without counting.
  const bytes = value.length > MAX_ID_BYTES ? value.length : utf8Length(value);
  if (hasLoneSurrogate(value)) throw invalid(`${name()} holds an unpaired UTF-16 surrogate (not valid Unicode)`, code);
  if (bytes > MAX_ID_BYTES) {
    throw invalid(`${name()} is too long: at most ${MAX_ID_BYTES} UTF-8 bytes are allowed`, code);
  }
  const at = controlCharIndex(value);
  if (at >= 0) {
    const hex = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
    throw invalid(`${name()} must not contain control characters (found U+${hex} at position ${at})`, code);
  }
}

/** Validates an identifier at `where` (e.g. `objects[2].id`); code `invalid_id`. */
export function parseIdAt(value: unknown, where: string): string {
  if (typeof value !== 'string') throw invalid(`${where} must be a string (got ${describe(value)})`, 'invalid_id');
  checkName(value, where, 'invalid_id');
  return value;
}

/**
 * A realm, object, area or token identifier: a string of 1–256 UTF-8 bytes without
 * control characters (C0, DEL, C1) or unpaired surrogates. Code `invalid_id`.
 */
export function parseId(value: unknown, what: 'realm' | 'object' | 'area' | 'token'): string {
  return parseIdAt(value, `${what} id`);
}
