/**
 * Every example of docs/instructions.md does what the document says: each `hivescript` block is
 * followed by a `hivescript-run` scenario (test/support/doc-scenario.ts), which this test plays
 * on a real server over SQLite through the public REST API, in a fresh realm per example. The
 * example's sendToUrl targets are pointed at a local receiver. Each expectation is waited for
 * (a few seconds at most); one that does not come true fails with its line in the document.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { fencedBlocks } from '../support/markdown-blocks.js';
import { parseScenario, type Scenario, type ScenarioStep } from '../support/doc-scenario.js';

const blocks = fencedBlocks(readFileSync(new URL('../../../docs/instructions.md', import.meta.url), 'utf8'));
const examples = blocks.flatMap((block, i) => (block.info === 'hivescript' ? [{ example: block, run: blocks[i + 1] }] : []));

/** How long an expectation may take to come true. */
const patienceMs = 10_000;
/** How long after the last step the receiver is watched for requests no step expects, and the things for changes no step expects. */
const quietMs = 300;

/** A POST the receiver got: the instruction it names, its path and the entries of its body. */
interface Post {
  instruction: string;
  path: string;
  entries: string[];
}

/** An entry of a sendToUrl body as scenarios write it: the id, or `a+b` for a pair. */
function entryName(entry: unknown): string {
  const { id, objects } = entry as { id?: unknown; objects?: { id?: unknown }[] };
  if (Array.isArray(objects)) return objects.map((object) => String(object.id)).join('+');
  return String(id);
}

async function startReceiver(): Promise<{ url: string; posts: Post[]; close(): Promise<void> }> {
  const posts: Post[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as unknown[];
      posts.push({ instruction: String(req.headers['x-locus-instruction']), path: req.url ?? '', entries: body.map(entryName) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Does `data` hold every key of `expected` with its value (null: the key is absent)? */
function holds(data: Record<string, unknown>, expected: Record<string, unknown>): boolean {
  return Object.entries(expected).every(([key, value]) => (value === null ? data[key] === undefined || data[key] === null : isDeepStrictEqual(data[key], value)));
}

describe('docs/instructions.md: the examples do what the document says', () => {
  let harness: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    harness = await startHarness({ sendToUrlAllow: ['127.0.0.1'], instructionLeaseRenewMs: 200, instructionLeaseTtlMs: 1000 });
  });
  after(async () => {
    await harness.stop();
    await receiver.close();
  });

  it('has a scenario after every example', () => {
    assert.ok(examples.length >= 15, `${examples.length} hivescript blocks`);
    for (const { example, run } of examples) assert.equal(run?.info, 'hivescript-run', `a hivescript-run block follows the example on line ${example.line}`);
  });

  for (const { example, run } of examples) {
    if (run?.info !== 'hivescript-run') continue;
    it(`the example on line ${example.line} does what its scenario on line ${run.line} says`, async () => {
      await play(example.line, example.body, parseScenario(run.body, run.line));
    });
  }

  /** Plays one scenario in a realm of its own. */
  async function play(exampleLine: number, source: string, scenario: Scenario): Promise<void> {
    const realm = `doc-${exampleLine}`;
    const instruction = `example-${exampleLine}`;
    const tokens = await makeRealm(harness.url, realm);
    const base = `/v2/realm/${realm}`;
    const send = async (method: string, path: string, body: unknown, at: ScenarioStep): Promise<void> => {
      const reply = await call(harness.url, method, base + path, { token: tokens.write, body });
      if (reply.status !== 200) assert.fail(`docs/instructions.md:${at.line}: ${at.text}: ${method} ${path} answered ${reply.status} ${reply.text}`);
    };
    const read = async (path: string): Promise<{ status: number; data: Record<string, unknown> }> => {
      const reply = await call(harness.url, 'GET', base + path, { token: tokens.read });
      return { status: reply.status, data: (reply.json as { data?: Record<string, unknown> } | undefined)?.data ?? {} };
    };
    const sent = (): Post[] => receiver.posts.filter((post) => post.instruction === instruction);
    /** (path, entry) → how many times the steps so far expect it sent. */
    const expectedSends = new Map<string, number>();
    const sentCount = (key: string): number => sent().flatMap((post) => post.entries.map((entry) => `${post.path} ${entry}`)).filter((k) => k === key).length;

    for (const at of scenario.given) {
      const { step } = at;
      if (step.kind === 'object') {
        await send('POST', `/object/${encodeURIComponent(step.id)}`, { ...(step.location === null ? {} : { location: step.location }), data: step.data }, at);
      } else if (step.kind === 'area') {
        const shape = { cx: step.centre.longitude, cy: step.centre.latitude, r: step.radius };
        await send('POST', `/area/${encodeURIComponent(step.id)}`, { label: step.id, shape, data: step.data }, at);
      }
    }
    // The example's URLs lead to the receiver, keeping their paths and queries.
    const pointed = source.replace(/https?:\/\/[A-Za-z0-9.-]+(?::\d+)?(?=\/)/g, receiver.url);
    const created = await call(harness.url, 'POST', `${base}/instruction/${instruction}`, { token: tokens.write, body: { instruction: pointed } });
    assert.equal(created.status, 200, `docs/instructions.md:${exampleLine}: creating the example answered ${created.status} ${created.text}`);

    /** Per thing, the check of its last expectation not followed by a write of it: that still holds at the end. */
    const lasting = new Map<string, { at: ScenarioStep; check: () => Promise<string | null> }>();
    const expectThing = async (at: ScenarioStep, thing: string, check: () => Promise<string | null>): Promise<void> => {
      await until(at, check);
      lasting.set(thing, { at, check });
    };

    for (const at of scenario.steps) {
      const { step } = at;
      if (step.kind === 'write' || step.kind === 'delete') lasting.delete(`object ${step.id}`);
      if (step.kind === 'write-area') lasting.delete(`area ${step.id}`);
      switch (step.kind) {
        case 'write': {
          const body = { ...(step.location === null ? {} : { location: step.location }), ...(step.data === null ? {} : { data: step.data }) };
          await send('POST', `/object/${encodeURIComponent(step.id)}`, body, at);
          break;
        }
        case 'write-area':
          await send('PATCH', `/area/${encodeURIComponent(step.id)}`, { data: step.data }, at);
          break;
        case 'delete':
          await send('DELETE', `/object/${encodeURIComponent(step.id)}`, undefined, at);
          break;
        case 'expect':
        case 'expect-area': {
          const path = `/${step.kind === 'expect' ? 'object' : 'area'}/${encodeURIComponent(step.id)}`;
          await expectThing(at, `${step.kind === 'expect' ? 'object' : 'area'} ${step.id}`, async () => {
            const seen = await read(path);
            return seen.status === 200 && holds(seen.data, step.data) ? null : seen.status === 200 ? `its data is ${JSON.stringify(seen.data)}` : `reading it answered ${seen.status}`;
          });
          break;
        }
        case 'expect-deleted':
          await expectThing(at, `object ${step.id}`, async () => {
            const seen = await read(`/object/${encodeURIComponent(step.id)}`);
            return seen.status === 404 ? null : `it still exists with data ${JSON.stringify(seen.data)}`;
          });
          break;
        case 'expect-post':
          for (const entry of step.entries) {
            const key = `${step.path} ${entry}`;
            expectedSends.set(key, (expectedSends.get(key) ?? 0) + 1);
          }
          await until(at, () =>
            Promise.resolve(
              [...expectedSends].every(([key, count]) => sentCount(key) >= count) ? null : `the receiver got ${JSON.stringify(sent().map(({ path, entries }) => ({ path, entries })))}`,
            ),
          );
          break;
        case 'object':
        case 'area':
          break;
      }
    }

    // then runs once per entry that joins: nothing is sent that no step expects.
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const got = sent().flatMap((post) => post.entries.map((entry) => `${post.path} ${entry}`));
    const unexpected = [...new Set(got)].filter((key) => sentCount(key) !== (expectedSends.get(key) ?? 0));
    assert.deepEqual(unexpected, [], `docs/instructions.md:${exampleLine}: the example sent what its scenario does not expect: ${JSON.stringify(got)}`);
    // What a thing was last expected to be, it stays: an action the scenario does not expect came not merely late.
    for (const { at, check } of lasting.values()) {
      const seen = await check();
      if (seen !== null) assert.fail(`docs/instructions.md:${at.line}: ${at.text}: no longer so at the end of the scenario: ${seen}`);
    }
  }
});

/** Waits for a step's expectation: `check` answers null when it holds, else what it saw. */
async function until(at: ScenarioStep, check: () => Promise<string | null>): Promise<void> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    const seen = await check();
    if (seen === null) return;
    if (Date.now() > deadline) assert.fail(`docs/instructions.md:${at.line}: ${at.text}: not so after ${patienceMs / 1000} s: ${seen}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
