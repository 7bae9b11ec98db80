/** The tool lookup (internal/cluster/tools.ts) the cluster and the tests share: any tool by name, the tools directory first. */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findTool, MissingToolError, requireTool, requireTools } from '../../internal/cluster/tools.js';

describe('tool lookup', () => {
  const root = mkdtempSync(join(tmpdir(), 'locus-tools-'));
  const onPath = join(root, 'path');
  mkdirSync(join(root, 'bin'));
  mkdirSync(onPath);
  /** An executable file `name` in `dir`, and a plain (not executable) file `plain-<name>`. */
  const place = (dir: string, name: string): string => {
    const path = join(dir, name);
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    writeFileSync(join(dir, `plain-${name}`), '');
    return path;
  };
  const env = { LOCUS_TOOLS_DIR: root, PATH: onPath };
  after(() => rmSync(root, { recursive: true, force: true }));

  it('finds any tool by name: the tools directory first, then the PATH; an unknown or non-executable one is null', () => {
    const ours = place(join(root, 'bin'), 'some-tool');
    place(onPath, 'some-tool');
    const other = place(onPath, 'other-tool');
    assert.equal(findTool('some-tool', env), ours);
    assert.equal(findTool('other-tool', env), other);
    assert.equal(findTool('plain-other-tool', env), null);
    assert.equal(findTool('no-such-tool-anywhere', env), null);
    assert.equal(requireTool('other-tool', env), other);
  });

  it('a missing tool is a MissingToolError naming it and the install command', () => {
    assert.throws(() => requireTool('no-such-tool-anywhere', env), (err: unknown) => {
      assert.ok(err instanceof MissingToolError);
      assert.match(err.message, /^no-such-tool-anywhere not found \(looked in .*\/bin, the PATH and \/usr\/sbin\); install with: bash scripts\/install-tools\.sh$/);
      return true;
    });
    const bare = { LOCUS_TOOLS_DIR: root, PATH: '' };
    if (findTool('nats-server', bare) === null) assert.throws(() => requireTools(bare), /nats-server/);
  });
});
