/** sameSnapshot (SQLite store): whether a write left label and data as they were, so that no history snapshot is kept for it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TrackedObject } from '../../internal/domain/types.js';
import { sameSnapshot } from '../../internal/store/sqlite/object-writes.js';

const obj = (json: string, label: string | null = null): TrackedObject => ({ id: 'a', label, location: null, data: JSON.parse(json) as TrackedObject['data'], seen: null });

void describe('sameSnapshot', () => {
  void it('nested values equal as JSON are the same, whatever their identity; any change, or a reorder inside, is not', () => {
    assert.equal(sameSnapshot(obj('{"a":1,"icon":{"c":"red","n":[1,null]}}'), obj('{"a":1,"icon":{"c":"red","n":[1,null]}}')), true);
    assert.equal(sameSnapshot(obj('{"icon":{"c":"red"}}'), obj('{"icon":{"c":"blue"}}')), false);
    assert.equal(sameSnapshot(obj('{"icon":{"c":"red","d":1}}'), obj('{"icon":{"d":1,"c":"red"}}')), false);
    assert.equal(sameSnapshot(obj('{"icon":[1]}'), obj('{"icon":"[1]"}')), false);
    assert.equal(sameSnapshot(obj('{"icon":[1]}'), obj('{"icon":[1]}', 'L')), false);
    assert.equal(sameSnapshot(obj('{"a":1,"b":"x"}'), obj('{"a":1,"b":"x"}')), true);
  });
});
