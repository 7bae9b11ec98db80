/** Limits of a tracked object's data that keep one write from filling the history and the search index. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_DATA_STRING_CHARS, parseDataPatch } from '../../internal/domain/data.js';
import { expectLocusError } from '../support/locus-error.js';

describe('data string values', () => {
  it('a string of 16,384 characters is taken; one more is invalid_data naming the key', () => {
    assert.equal(MAX_DATA_STRING_CHARS, 16_384);
    assert.deepEqual(parseDataPatch({ note: 'x'.repeat(16_384) }, 'data'), { note: 'x'.repeat(16_384) });
    expectLocusError(() => parseDataPatch({ note: 'x'.repeat(16_385) }, 'data'), 'invalid_data', /data\.note is 16385 characters long; at most 16384/);
  });
});
