/**
 * Runs every curl example of docs/api.md, in order, against a fresh server and
 * compares its output with the JSON block that follows it ("…" matches any value).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { adminToken, call, startHarness, type Harness } from '../support/harness.js';
import { matchesJson } from '../support/json-match.js';

const run = promisify(execFile);

interface Example {
  command: string;
  expected: unknown;
  line: number;
}

function extractExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  const pattern = /```sh\n([\s\S]*?)```\n```json\n([\s\S]*?)```/g;
  for (const match of markdown.matchAll(pattern)) {
    const [, command = '', expected = ''] = match;
    const line = markdown.slice(0, match.index).split('\n').length;
    examples.push({ command, expected: JSON.parse(expected) as unknown, line });
  }
  return examples;
}

describe('docs/api.md examples', () => {
  const markdown = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const examples = extractExamples(markdown);
  let h: Harness;
  const env: Record<string, string> = {};

  before(async () => {
    h = await startHarness({ demoRealm: true });
    const demo = h.server.demoToken;
    assert.ok(demo);
    const read = await call(h.url, 'POST', '/admin/v1/realm/demo/token', { token: adminToken, body: { scope: 'read' } });
    Object.assign(env, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LOCUS: h.url,
      TOKEN: demo.token,
      READ_TOKEN: (read.json as { token: string }).token,
      ADMIN_TOKEN: adminToken,
    });
  });
  after(async () => {
    await h.stop();
  });

  it('has examples for every endpoint family', () => {
    assert.ok(examples.length >= 15, `found ${examples.length} examples`);
    for (const path of ['/v2/realm/demo/object', '/v2/realm/demo/area', '/v2/realm/depots', '/admin/v1/realm', '/v2/version', '/v2/realm/demo/search', '/history']) {
      assert.ok(examples.some((e) => e.command.includes(path)), `no example for ${path}`);
    }
  });

  for (const example of extractExamples(readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8'))) {
    it(`docs/api.md line ${example.line}: ${example.command.split('\n')[0]?.slice(0, 70)}`, async () => {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', example.command], { env });
      const actual: unknown = JSON.parse(stdout);
      assert.ok(matchesJson(actual, example.expected), `got ${stdout}\nexpected ${JSON.stringify(example.expected)}`);
    });
  }
});
