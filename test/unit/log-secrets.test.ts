/** The end-of-run check of scripts/run-tests.mjs: a recorded secret in any log is found, named by file and line, never printed. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkLogsForSecrets, describeLogCheck } from '../support/log-secrets.js';

describe('log secrets check', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const runDir = (files: Record<string, string>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-log-check-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  const token = 'lcs_w_0123456789abcdefghijklmnop';
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

  it('finds a planted secret, naming file and line but not the secret', () => {
    const dir = runDir({
      'secrets-100.txt': `${token}\n`,
      'secrets-200.txt': `${jwt}\n${token}\n`,
      'inprocess-100.log': '{"msg":"locus listening"}\n{"msg":"request","status":200}\n',
      'child-200-1.stderr.log': `one\ntwo\n{"msg":"authentication failed","header":"Bearer ${jwt}"}\nfour`,
    });
    const check = checkLogsForSecrets(dir);
    assert.deepEqual(check, {
      logFiles: 2,
      logLines: 6,
      secrets: 2,
      findings: [{ file: 'child-200-1.stderr.log', line: 3, secret: 1, secretLength: jwt.length }],
    });
    const report = describeLogCheck(check, dir);
    assert.match(report, /^log secrets check: 6 log lines in 2 files, 2 secrets \(tokens, Authorization values\): 1 found\n/);
    assert.ok(report.includes(`${join(dir, 'child-200-1.stderr.log')}:3 contains recorded secret #1`), report);
    assert.ok(!report.includes(jwt) && !report.includes(token), 'the report never shows a secret');
  });

  it('finds every occurrence, in every file', () => {
    const dir = runDir({
      'secrets-1.txt': `${token}\n`,
      'a.log': `${token}${token}\nx\n`,
      'cluster-1.log': `api-1 | ok\napi-2 | token=${token}\n`,
    });
    assert.deepEqual(
      checkLogsForSecrets(dir).findings.map((f) => `${f.file}:${f.line}`),
      ['a.log:1', 'a.log:1', 'cluster-1.log:2'],
    );
  });

  it('passes clean logs', () => {
    const dir = runDir({ 'secrets-1.txt': `${token}\n`, 'inprocess-1.log': '{"msg":"request","tokenId":"tok_1"}\n' });
    const check = checkLogsForSecrets(dir);
    assert.deepEqual(check.findings, []);
    assert.match(describeLogCheck(check, dir), /^log secrets check: 1 log lines in 1 files, 1 secrets \(tokens, Authorization values\): none found$/);
  });
});
