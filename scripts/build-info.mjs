// Writes dist/build-info.json: the package version and the build date reported by
// GET /v2/version and the v1 auth success message.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const buildDate = process.env.LOCUS_BUILD_DATE ?? new Date().toISOString();
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../dist/build-info.json', import.meta.url),
  JSON.stringify({ version: pkg.version, buildDate }) + '\n',
);
