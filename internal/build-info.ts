/** Version and build date, written to dist/build-info.json by scripts/build-info.mjs. */
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  version: string;
  buildDate: string;
}

export function readBuildInfo(): BuildInfo {
  // Compiled to dist/internal/build-info.js; the file sits at dist/build-info.json.
  const text = readFileSync(new URL('../build-info.json', import.meta.url), 'utf8');
  const parsed = JSON.parse(text) as Partial<BuildInfo>;
  if (typeof parsed.version !== 'string' || typeof parsed.buildDate !== 'string') {
    throw new Error('dist/build-info.json is malformed; run npm run build');
  }
  return { version: parsed.version, buildDate: parsed.buildDate };
}
