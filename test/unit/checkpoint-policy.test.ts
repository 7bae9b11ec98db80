import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHECKPOINT_BUSY_MS, CHECKPOINT_IDLE_MS, nextPassDelay } from '../../internal/store/sqlite/checkpointer.js';

describe('checkpointer: when the next pass runs', () => {
  it('at once while frames are left to copy or new ones came since the last look, later when idle', () => {
    assert.ok(CHECKPOINT_BUSY_MS < CHECKPOINT_IDLE_MS);
    // Frames not all copied (the writer committed during the pass): again at once.
    assert.equal(nextPassDelay({ busy: 0, log: 900, checkpointed: 600 }, 900), CHECKPOINT_BUSY_MS);
    // All copied, but new since the last look: the writer is at work.
    assert.equal(nextPassDelay({ busy: 0, log: 900, checkpointed: 900 }, 500), CHECKPOINT_BUSY_MS);
    // Rewound since the last look (fewer frames): at work.
    assert.equal(nextPassDelay({ busy: 0, log: 40, checkpointed: 40 }, 900), CHECKPOINT_BUSY_MS);
    // Nothing new and everything copied: idle.
    assert.equal(nextPassDelay({ busy: 0, log: 900, checkpointed: 900 }, 900), CHECKPOINT_IDLE_MS);
    assert.equal(nextPassDelay({ busy: 0, log: 0, checkpointed: 0 }, 0), CHECKPOINT_IDLE_MS);
    // No answer: look again soon.
    assert.equal(nextPassDelay(undefined, 0), CHECKPOINT_BUSY_MS);
  });
});
