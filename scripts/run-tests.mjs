// Runs every compiled *.test.js under dist/ with node's built-in test runner.
// Node 20's --test has no glob support, so the file list is gathered here.
//
// Every test process gets LOCUS_TEST_LOG_DIR, a fresh directory of this run (or the one given):
// test support writes the servers' logs and the secrets the tests used there
// (test/support/test-logs.ts). After the tests, no recorded secret may appear in any log
// (test/support/log-secrets.ts); the directory is removed unless the check fails or
// LOCUS_TEST_KEEP_LOGS=1.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, out);
    else if (entry.name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filter = process.argv.slice(2);
const files = collect('dist', [])
  .filter((f) => filter.length === 0 || filter.some((part) => f.includes(part)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const givenDir = process.env.LOCUS_TEST_LOG_DIR;
const logDir = givenDir !== undefined && givenDir !== '' ? givenDir : mkdtempSync(join(tmpdir(), 'locus-test-logs-'));
mkdirSync(logDir, { recursive: true });
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--enable-source-maps', ...files],
  { stdio: 'inherit', env: { ...process.env, LOCUS_TEST_LOG_DIR: logDir } },
);
let status = result.status ?? 1;

const { checkLogsForSecrets, describeLogCheck } = await import(new URL('../dist/test/support/log-secrets.js', import.meta.url).href);
const check = checkLogsForSecrets(logDir);
console.log(describeLogCheck(check, logDir));
let keep = process.env.LOCUS_TEST_KEEP_LOGS === '1' || logDir === givenDir;
if (check.findings.length > 0) {
  console.error(`a token or Authorization value the tests used is in a log (files kept in ${logDir})`);
  status = 1;
  keep = true;
} else if (filter.length === 0 && (check.logLines === 0 || check.secrets === 0)) {
  console.error('the full run collected no server log lines or no secrets: the log collection of test/support/test-logs.ts is broken');
  status = 1;
}
if (!keep) rmSync(logDir, { recursive: true, force: true });
process.exit(status);
