// npm's `prepare` (run by `npm ci` and `npm install`): builds dist/ so that `npm run locus`
// works right after the install. An install without dev dependencies (`npm ci --omit=dev`,
// as a container image's last stage does after building) has no TypeScript: it skips the
// build instead of failing the install, and uses the dist/ built before.
import { spawnSync } from 'node:child_process';

let hasTypeScript = true;
try {
  import.meta.resolve('typescript');
} catch {
  hasTypeScript = false;
}
if (!hasTypeScript) {
  console.error('locus prepare: TypeScript is not installed (dev dependencies omitted); skipping the build, dist/ is used as it is');
  process.exit(0);
}
const npm = process.env.npm_execpath;
const result = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);
