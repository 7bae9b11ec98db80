/**
 * The entry points' help beyond `--help`/`-h` (which test/integration/runtime-image.test.ts
 * runs on every entry point of the image): the operator, configured by environment variables
 * only, lists every variable its configuration reads, and refuses an argument it does not
 * know instead of starting.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { operatorUsage } from '../../internal/operator/operator-help.js';

const operatorScript = fileURLToPath(new URL('../../cmd/operator.js', import.meta.url));
const operatorConfigSource = readFileSync(new URL('../../../internal/operator/operator-config.ts', import.meta.url), 'utf8');

const variables = (text: string): string[] => [...new Set(text.match(/\bLOCUS_[A-Z_]+\b/g) ?? [])].sort();

describe("the operator's help", () => {
  it('names exactly the LOCUS_ variables internal/operator/operator-config.ts reads', () => {
    assert.ok(variables(operatorConfigSource).length > 10);
    assert.deepEqual(variables(operatorUsage), variables(operatorConfigSource));
  });

  it('an argument other than --help or -h is refused with exit code 2, naming it, and nothing starts', () => {
    const result = spawnSync(process.execPath, [operatorScript, '--namespace', 'x'], {
      env: { PATH: process.env.PATH ?? '', KUBECONFIG: '/nonexistent' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /^locus operator: unexpected argument "--namespace"; it is configured by environment variables\n\nusage:/);
    assert.equal(result.stdout, '');
  });
});
