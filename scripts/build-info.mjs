// Writes dist/build-info.json: the package version and the build date reported by
// GET /v2/version and the v1 auth success message.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const buildDate = process.env.LOCUS_BUILD_DATE ?? new Date().toISOString();
// The commit built (locus_build_info's `revision`): LOCUS_BUILD_REVISION, else git's, else unknown.
function revision() {
  if (process.env.LOCUS_BUILD_REVISION) return process.env.LOCUS_BUILD_REVISION;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../dist/build-info.json', import.meta.url),
  JSON.stringify({ version: pkg.version, buildDate, revision: revision() }) + '\n',
);
