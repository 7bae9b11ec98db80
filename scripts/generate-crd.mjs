// Writes crds/realms.locus.dev.yaml from the compiled internal/kube/realm-crd.ts (run the build
// first). `--check` only compares, and exits 1 when the file is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { realmCrdYaml } from '../dist/internal/kube/realm-crd.js';

const path = new URL('../crds/realms.locus.dev.yaml', import.meta.url);
const yaml = realmCrdYaml();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // missing: out of date
  }
  if (current !== yaml) {
    console.error('crds/realms.locus.dev.yaml is out of date: run npm run build && node scripts/generate-crd.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(path, yaml);
  console.log('wrote crds/realms.locus.dev.yaml');
}
