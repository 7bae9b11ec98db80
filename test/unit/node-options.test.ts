/** The Node.js options the server runs with, and that npm start passes them. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SEMI_SPACE_MIB, SERVER_NODE_OPTIONS, semiSpaceOption } from '../../internal/runtime/node-options.js';

void describe('node options of the server', () => {
  void it('npm start passes every one of them to the server', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    const start = (pkg.scripts.start ?? '').split(/\s+/);
    assert.equal(start[0], 'node');
    assert.equal(start[start.length - 1], 'dist/cmd/server.js');
    for (const option of SERVER_NODE_OPTIONS) assert.ok(start.includes(option), `${option} in "${pkg.scripts.start ?? ''}"`);
    assert.equal(semiSpaceOption(start, ''), SEMI_SPACE_MIB);
  });

  void it('reads the semi-space size from the command line or NODE_OPTIONS, the last one winning', () => {
    assert.equal(semiSpaceOption([], ''), null);
    assert.equal(semiSpaceOption(['--expose-gc'], '--max-old-space-size=4096'), null);
    assert.equal(semiSpaceOption([], '--max-semi-space-size=64'), 64);
    assert.equal(semiSpaceOption(['--max_semi_space_size=16'], ''), 16);
    assert.equal(semiSpaceOption(['--max-semi-space-size=8'], '--max-semi-space-size=64'), 8);
    assert.equal(semiSpaceOption(['--max-semi-space-size=8', '--max-semi-space-size=32'], ''), 32);
    assert.equal(semiSpaceOption(['--max-semi-space-size='], ''), null);
  });
});
