/** Test helper: asserts that a call throws a LocusError with the given code and a short, human message. */
import assert from 'node:assert/strict';
import { LocusError, type ErrorCode } from '../../internal/errors.js';

export function expectLocusError(fn: () => unknown, code: ErrorCode, message?: RegExp | string): LocusError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof LocusError, `expected a LocusError, got ${String(caught)}`);
  assert.equal(caught.code, code, `code of "${caught.message}"`);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else if (message !== undefined) assert.match(caught.message, message);
  assert.ok(caught.message.length < 400, `message too long: ${caught.message.length}`);
  return caught;
}
