/** The README's install command alone makes the `locus` command runnable: npm ci runs `prepare`. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

describe('package scripts', () => {
  it('builds on install (prepare), so npm run locus works right after npm ci', () => {
    assert.equal(pkg.scripts.prepare, 'node scripts/prepare.mjs');
    assert.match(pkg.scripts.build ?? '', /^tsc -p tsconfig\.json && node scripts\/build-parser\.mjs && node scripts\/build-info\.mjs$/);
    assert.equal(pkg.scripts.locus, `node ${pkg.bin.locus}`);
  });

  it('npm test installs the test tools first (nats-server, haproxy), as .ci/run does', () => {
    assert.equal(pkg.scripts.pretest, 'bash scripts/install-tools.sh');
    assert.match(readFileSync(new URL('../../../.ci/run', import.meta.url), 'utf8'), /^bash scripts\/install-tools\.sh$/m);
  });

  it('prepare skips the build, and does not fail the install, where TypeScript is not installed (npm ci --omit=dev)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-prepare-'));
    try {
      const script = join(dir, 'prepare.mjs');
      copyFileSync(new URL('../../../scripts/prepare.mjs', import.meta.url), script);
      const run = spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /TypeScript is not installed .*skipping the build/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
