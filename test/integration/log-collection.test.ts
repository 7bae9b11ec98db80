/**
 * The collection behind the "no token in any log" check (test/support/test-logs.ts): a test
 * process given LOCUS_TEST_LOG_DIR records the tokens it uses and its servers' logs there, and
 * the check finds a token once one is in a log.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkLogsForSecrets } from '../support/log-secrets.js';

const support = (file: string): string => new URL(`../support/${file}`, import.meta.url).href;

describe('test log collection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'locus-log-collection-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('records the tokens and the in-process and child-process server logs of a test process', () => {
    const script = `
      const h = await import(${JSON.stringify(support('harness.js'))});
      const p = await import(${JSON.stringify(support('server-process.js'))});
      const harness = await h.startHarness();
      const tokens = await h.makeRealm(harness.url, 'fleet');
      const put = await h.call(harness.url, 'PUT', '/v2/realm/fleet/object/a', { token: tokens.write, body: { location: { longitude: 1, latitude: 2 } } });
      if (put.status !== 200) throw new Error(put.text);
      await h.call(harness.url, 'GET', '/v2/realm/fleet/object/a', { headers: { authorization: 'Bearer not-a-token-but-a-header' } });
      await harness.stop();
      const proc = p.spawnServer({ LOCUS_ADMIN_TOKEN: h.adminToken });
      const { httpUrl } = await p.listening(proc);
      await h.makeRealm(httpUrl, 'other');
      proc.child.kill('SIGTERM');
      await proc.exited;
      proc.cleanup();
    `;
    const env: NodeJS.ProcessEnv = { ...process.env, LOCUS_TEST_LOG_DIR: dir };
    delete env.NODE_TEST_CONTEXT;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(run.status, 0, run.stderr);
    const files = readdirSync(dir).map((f) => f.replace(/-\d+(-\d+)?\./, '-N.'));
    assert.deepEqual(files.sort(), ['child-N.stderr.log', 'child-N.stdout.log', 'inprocess-N.log', 'secrets-N.txt']);
    const secrets = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith('secrets-')) ?? ''), 'utf8').split('\n').filter((s) => s !== '');
    // The admin token, three tokens per realm, the header value.
    assert.equal(secrets.length, 8, secrets.map((s) => s.slice(0, 6)).join(' '));
    assert.ok(secrets.includes('test-admin-token-0123456789') && secrets.includes('not-a-token-but-a-header'));
    const inProcess = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith('inprocess-')) ?? ''), 'utf8');
    assert.match(inProcess, /"msg":"locus listening"/);
    assert.match(inProcess, /"route":"\/v2\/realm\/:realm\/object\/:id"/);
    const childOut = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.stdout.log')) ?? ''), 'utf8');
    assert.match(childOut, /"msg":"locus stopped"/);

    const clean = checkLogsForSecrets(dir);
    assert.deepEqual(clean.findings, []);
    assert.equal(clean.secrets, 8);
    assert.ok(clean.logLines >= 10, `${clean.logLines} lines`);

    const leaked = secrets[3] ?? '';
    appendFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.stdout.log')) ?? ''), `{"msg":"oops","auth":"Bearer ${leaked}"}\n`);
    const dirty = checkLogsForSecrets(dir);
    assert.equal(dirty.findings.length, 1);
    assert.match(dirty.findings[0]?.file ?? '', /^child-\d+-1\.stdout\.log$/);
  });
});
