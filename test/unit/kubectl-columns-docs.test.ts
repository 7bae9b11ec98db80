/**
 * docs/kubernetes.md shows what `kubectl get realms` prints: the headers of its examples are
 * the CRD's printer columns (internal/kube/realm-crd.ts), those of priority 0 without
 * `-o wide` and all of them with it, in the CRD's order after NAME, as kubectl prints them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { realmCrd } from '../../internal/kube/realm-crd.js';

interface Column {
  name: string;
  priority?: number;
}

const doc = readFileSync(new URL('../../../docs/kubernetes.md', import.meta.url), 'utf8');

function columns(): Column[] {
  const versions = (realmCrd() as { spec: { versions: { additionalPrinterColumns: Column[] }[] } }).spec.versions;
  assert.equal(versions.length, 1);
  return (versions[0] as { additionalPrinterColumns: Column[] }).additionalPrinterColumns;
}

/** The header kubectl prints, single-spaced: NAME, then the names of the columns shown, upper case. */
const header = (shown: readonly Column[]): string => ['NAME', ...shown.map((c) => c.name.toUpperCase())].join(' ');

/** Each `kubectl get realms` command of the doc with the header line of its output example. */
function examples(): { wide: boolean; header: string }[] {
  const found: { wide: boolean; header: string }[] = [];
  const lines = doc.split('\n');
  lines.forEach((line, at) => {
    if (!/^kubectl get realms\b/.test(line)) return;
    const next = lines[at + 1] ?? '';
    if (!next.startsWith('# NAME')) return;
    found.push({ wide: /-o wide\b/.test(line), header: next.slice(2).trim().split(/\s{2,}/).join(' ') });
  });
  return found;
}

describe('docs/kubernetes.md: kubectl get realms', () => {
  it('shows the listing without and with -o wide, each with the columns kubectl prints', () => {
    const all = columns();
    const shown = examples();
    assert.deepEqual(shown.map((e) => e.wide).sort(), [false, true]);
    for (const example of shown) {
      const expected = header(example.wide ? all : all.filter((c) => (c.priority ?? 0) === 0));
      assert.equal(example.header, expected, example.wide ? 'kubectl get realms -o wide' : 'kubectl get realms');
    }
  });
});
