/** The README's install command alone makes the `locus` command runnable: npm ci runs `prepare`. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

describe('package scripts', () => {
  it('builds on install (prepare), so npm run locus works right after npm ci', () => {
    assert.equal(pkg.scripts.prepare, 'npm run build');
    assert.match(pkg.scripts.build ?? '', /^tsc -p tsconfig\.json && node scripts\/build-info\.mjs$/);
    assert.equal(pkg.scripts.locus, `node ${pkg.bin.locus}`);
  });
});
