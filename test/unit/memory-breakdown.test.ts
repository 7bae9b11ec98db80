/** test/support/memory-breakdown.ts: resident pages per mapping, as the query bench reports its RSS. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBreakdown, memoryBreakdown, residentByMapping } from '../support/memory-breakdown.js';

const SMAPS = `55d0c0000000-55d0c2a00000 r-xp 00000000 08:01 1234                       /usr/bin/node
Size:              43008 kB
Rss:               43000 kB
55d0c4000000-55d0c8000000 rw-p 00000000 00:00 0                          [heap]
Size:              65536 kB
Rss:               60000 kB
7f0000000000-7f0040000000 r--s 00000000 08:01 99                         /tmp/x/locus.db
Size:            1048576 kB
Rss:              250000 kB
7f0040000000-7f0044000000 rw-p 00000000 00:00 0 
Size:              65536 kB
Rss:                1024 kB
7f0050000000-7f0050100000 r--s 00000000 08:01 100                        /tmp/x/locus.db
Size:               1024 kB
Rss:                1000 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  24 kB
`;

describe('memory breakdown', () => {
  it('sums resident KiB per mapped file, anonymous mappings ([heap], [stack], unnamed) together', () => {
    assert.deepEqual(
      [...residentByMapping(SMAPS)].sort(),
      [
        ['anonymous', 61048],
        ['locus.db', 251000],
        ['node', 43000],
      ].sort(),
    );
  });

  it("reads this process's figures; the mappings add up to about its RSS", () => {
    const memory = memoryBreakdown();
    assert.ok(memory.heapUsedMib > 0 && memory.heapUsedMib <= memory.heapTotalMib);
    assert.ok(memory.spaces.has('new_space'));
    if (memory.mappings !== null) {
      const sum = [...memory.mappings.values()].reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - memory.rssMib) < 0.2 * memory.rssMib, `mappings ${sum} MiB, RSS ${memory.rssMib} MiB`);
    }
    assert.match(formatBreakdown(memory), /^RSS \d+ MiB\n {2}V8 heap \(main thread\) used \d+ MiB of \d+ MiB \(/);
  });
});
