/** Version and build date, written to dist/build-info.json by scripts/build-info.mjs. */
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  version: string;
  buildDate: string;
}

function readBuildFile(): Partial<BuildInfo> & { revision?: unknown } {
  // Compiled to dist/internal/build-info.js; the file sits at dist/build-info.json.
  const text = readFileSync(new URL('../build-info.json', import.meta.url), 'utf8');
  return JSON.parse(text) as Partial<BuildInfo> & { revision?: unknown };
}

export function readBuildInfo(): BuildInfo {
  const parsed = readBuildFile();
  if (typeof parsed.version !== 'string' || typeof parsed.buildDate !== 'string') {
    throw new Error('dist/build-info.json is malformed; run npm run build');
  }
  return { version: parsed.version, buildDate: parsed.buildDate };
}

/** The commit built (git's short hash, or LOCUS_BUILD_REVISION at build time); `unknown` when the build did not know. */
export function readBuildRevision(): string {
  const { revision } = readBuildFile();
  return typeof revision === 'string' && revision !== '' ? revision : 'unknown';
}
