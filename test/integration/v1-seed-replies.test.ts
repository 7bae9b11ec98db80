/**
 * Messages in the seed's form, without `cid`, get their replies (decisions "Replies to
 * messages without `cid`"): the README's own TCP example, run as the README writes it, and
 * one table of cid-less frames run over `/v1/http`, WebSocket and TCP. A successful `set`
 * without `cid` is the one message that gets no reply; errors always get theirs.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig } from '../../internal/config/config.js';
import { adminToken, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { matchesJson } from '../support/json-match.js';
import { recordSecret } from '../support/test-logs.js';
import { connectV1, postV1, type Json, type V1Client } from '../support/v1-clients.js';

const run = promisify(execFile);

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The `sh` code blocks of a markdown text. */
const shBlocks = (markdown: string): string[] => [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

/** The README's one block that holds `needle`. */
function readmeBlock(needle: string): string {
  const blocks = shBlocks(readme).filter((block) => block.includes(needle));
  assert.equal(blocks.length, 1, `README.md has one sh block with ${needle}`);
  return blocks[0] as string;
}

/**
 * Sends bytes over TCP as `nc -N` does (half-closes once its input ends) and returns all
 * the server wrote until it closed.
 */
function netcat(port: number, input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let output = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (output += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(output));
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no end of output within 10 s; got ${JSON.stringify(output)}`)));
    socket.end(input);
  });
}

describe("the README's TCP example", () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ demoRealm: true });
  });
  after(async () => {
    await h.stop();
  });

  it('prints the sign-in reply and the list written by the curl example before it', async () => {
    const token = h.server.demoToken?.token;
    assert.ok(token !== undefined, 'the demo realm and its token');
    recordSecret(token);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TOKEN: token };
    // The quick start's write, as written, aimed at this server.
    const curl = readmeBlock('curl -X POST');
    assert.ok(curl.includes('http://localhost:8080'), 'the curl example addresses localhost:8080');
    await run('bash', ['-euo', 'pipefail', '-c', curl.replaceAll('http://localhost:8080', h.url)], { env });

    const example = readmeBlock('nc -N');
    const pipe = /^(printf .*) \| nc -N (\S+) (\d+)\s*$/m.exec(example);
    assert.ok(pipe !== null, `the example is "printf … | nc -N <host> <port>": ${example}`);
    const [, printf = '', host, port] = pipe;
    assert.equal(host, 'localhost');
    assert.equal(Number(port), loadConfig({}).tcpPort, "the example's port is the default LOCUS_TCP_PORT");
    // What nc would read: the README's printf, run by the shell.
    const { stdout: input } = await run('bash', ['-euo', 'pipefail', '-c', printf], { env });
    assert.ok(input.startsWith(`Bearer ${token}\n[`), 'the printf line renders a sign-in line and a message');

    const output = await netcat(h.server.tcpPort, input);
    const lines = output.split('\n');
    assert.equal(lines.pop(), '', 'every line ends with a newline');
    assert.equal(lines.length, 2, output);
    const [signIn, list] = lines.map((line) => JSON.parse(line) as unknown);
    assert.ok(matchesJson(signIn, [{ typ: 'sys', act: 'aut', res: 'suc', dat: { version: '…', buildDate: '…' } }]), JSON.stringify(signIn));
    assert.deepEqual(list, [{ typ: 'obj', act: 'lis', res: 'suc', dat: { 'truck/1': { id: 'truck/1', lab: 'Truck 1', cst: 'dis', dat: { fuel: 0.8 } } } }]);
  });
});

/** One frame sent without `cid`, and the replies it must get (none: no reply at all). */
interface Exchange {
  name: string;
  /** `R` is the transport's own realm; realm `r1` is shared and read only. */
  frame: (realm: string) => unknown[];
  replies: unknown[];
  /** Sent with the read-only token of `r1` instead of the transport realm's write token. */
  r1?: true;
}

const tim = '2026-01-01T00:00:00.000Z';
const zeroLoc = { gcs: '', acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 };

const exchanges: Exchange[] = [
  {
    name: "decisions.md's example: obj lis in r1 with an empty dat",
    r1: true,
    frame: () => [{ typ: 'obj', act: 'lis', rea: 'r1', dat: {} }],
    replies: [{ typ: 'obj', act: 'lis', res: 'suc', dat: { 'depot/1': { id: 'depot/1', lab: 'Depot', cst: 'dis' } } }],
  },
  {
    name: 'a successful set gets no reply',
    frame: (R) => [{ typ: 'obj', act: 'set', rea: R, id: 'van/1', lab: 'Van', loc: { lon: 13.4, lat: 52.5, tim } }],
    replies: [],
  },
  {
    name: 'the set was applied: obj rea answers with the record',
    frame: (R) => [{ typ: 'obj', act: 'rea', rea: R, id: 'van/1' }],
    replies: [{ typ: 'obj', act: 'rea', res: 'suc', dat: { id: 'van/1', lab: 'Van', loc: { ...zeroLoc, lon: 13.4, lat: 52.5, tim }, cst: 'dis' } }],
  },
  {
    name: 'cre, upd and lis in one frame: a reply each, in order',
    frame: (R) => [
      { typ: 'obj', act: 'cre', rea: R, id: 'bus/2', lab: 'Bus', dat: { line: 'M10' } },
      { typ: 'obj', act: 'upd', rea: R, id: 'van/1', dat: { fuel: 0.5 } },
      { typ: 'obj', act: 'lis', rea: R, dat: { fie: ['fuel'] } },
    ],
    replies: [
      { typ: 'obj', act: 'cre', res: 'suc' },
      { typ: 'obj', act: 'upd', res: 'suc' },
      { typ: 'obj', act: 'lis', res: 'suc', dat: { 'bus/2': { id: 'bus/2', lab: 'Bus', cst: 'dis', dat: {} }, 'van/1': { id: 'van/1', lab: 'Van', cst: 'dis', dat: { fuel: 0.5 } } } },
    ],
  },
  {
    name: 'a set between two messages: only the other two are answered',
    frame: (R) => [
      { typ: 'sys', act: 'hbt' },
      { typ: 'obj', act: 'set', rea: R, id: 'bus/2', loc: { lon: 1, lat: 2, tim } },
      { typ: 'are', act: 'cre', rea: R, id: 'yard', sty: 'cir', sha: { cx: 1, cy: 2, r: 50 } },
    ],
    replies: [
      { typ: 'sys', act: 'hbt', res: 'suc' },
      { typ: 'are', act: 'cre', res: 'suc' },
    ],
  },
  {
    name: 'are lis',
    frame: (R) => [{ typ: 'are', act: 'lis', rea: R }],
    replies: [{ typ: 'are', act: 'lis', res: 'suc', dat: { yard: { id: 'yard', lab: '', sty: 'cir' } } }],
  },
  {
    name: 'a failing set gets its error, and writes nothing',
    frame: (R) => [
      { typ: 'obj', act: 'set', rea: R, id: 'bus/2', loc: { lon: 500, lat: 0 } },
      { typ: 'obj', act: 'rea', rea: R, id: 'bus/2' },
    ],
    replies: [
      { typ: 'obj', act: 'set', res: 'err', err: 'loc.lon must be a number between -180 and 180 (got 500)', erc: 400 },
      { typ: 'obj', act: 'rea', res: 'suc', dat: { id: 'bus/2', lab: 'Bus', loc: { ...zeroLoc, lon: 1, lat: 2, tim }, dat: { line: 'M10' }, cst: 'dis' } },
    ],
  },
  {
    name: 'failing reads and deletes get their errors',
    frame: (R) => [
      { typ: 'obj', act: 'rea', rea: R, id: 'nobody' },
      { typ: 'obj', act: 'del', rea: R, id: 'nobody' },
      { typ: 'obj', act: 'fly', rea: R },
    ],
    replies: [
      { typ: 'obj', act: 'rea', res: 'err', err: 'unknown object nobody', erc: 404 },
      { typ: 'obj', act: 'del', res: 'err', err: 'unknown object nobody', erc: 404 },
      { typ: 'obj', act: 'fly', res: 'err', err: 'unknown act "fly" for typ obj; known: cre, set, upd, rea, lis, del, blk', erc: 400 },
    ],
  },
  {
    name: 'a read-only token may not write: the error, without cid',
    r1: true,
    frame: () => [{ typ: 'obj', act: 'set', rea: 'r1', id: 'depot/2', loc: { lon: 1, lat: 1 } }],
    replies: [{ typ: 'obj', act: 'set', res: 'err', err: '…', erc: 403 }],
  },
  {
    name: 'del is answered',
    frame: (R) => [
      { typ: 'obj', act: 'del', rea: R, id: 'van/1' },
      { typ: 'obj', act: 'lis', rea: R },
    ],
    replies: [
      { typ: 'obj', act: 'del', res: 'suc' },
      { typ: 'obj', act: 'lis', res: 'suc', dat: { 'bus/2': { id: 'bus/2', lab: 'Bus', cst: 'dis' } } },
    ],
  },
];

interface Tokens {
  own: string;
  r1: string;
}

/** Sends one frame and returns what came back: the reply array, or null when none came. */
interface Driver {
  send(exchange: Exchange, realm: string): Promise<unknown[] | null>;
  close(): Promise<void>;
}

function httpDriver(h: Harness, tokens: Tokens): Driver {
  return {
    async send(exchange, realm) {
      const res = await postV1(h.url, exchange.r1 === true ? tokens.r1 : tokens.own, exchange.frame(realm));
      assert.equal(res.status, 200, JSON.stringify(res.json));
      // Over HTTP no reply is an empty array.
      return (res.json as unknown[]).length === 0 ? null : (res.json as unknown[]);
    },
    close: () => Promise.resolve(),
  };
}

/** Frame by frame on one connection per token; "no reply" shows as the reply to a `sys pin` sent after it coming next. */
function socketDriver(h: Harness, transport: 'ws' | 'tcp', tokens: Tokens): Driver {
  const clients = new Map<string, V1Client>();
  return {
    async send(exchange, realm) {
      const token = exchange.r1 === true ? tokens.r1 : tokens.own;
      let client = clients.get(token);
      if (client === undefined) {
        client = await connectV1(transport, h.server, token);
        clients.set(token, client);
      }
      client.sendText(JSON.stringify(exchange.frame(realm)));
      client.sendText(JSON.stringify([{ typ: 'sys', act: 'pin', rid: 'probe' }]));
      const first = (await client.next()) as unknown[];
      if ((first[0] as Json)?.rid === 'probe') return null;
      const probe = (await client.next()) as Json[];
      assert.equal(probe[0]?.rid, 'probe', `one frame of replies, then the probe's: ${JSON.stringify(probe)}`);
      return first;
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}

describe('messages without cid get their replies over /v1/http, WebSocket and TCP', () => {
  let h: Harness;
  let r1: string;
  before(async () => {
    h = await startHarness();
    r1 = (await makeRealm(h.url, 'r1')).read;
    const res = await postV1(h.url, adminToken, [{ typ: 'obj', act: 'cre', cid: 'c', rea: 'r1', id: 'depot/1', lab: 'Depot' }]);
    assert.deepEqual(res.json, [{ typ: 'obj', act: 'cre', cid: 'c', res: 'suc' }]);
  });
  after(async () => {
    await h.stop();
  });

  const transports = {
    http: (tokens: Tokens) => httpDriver(h, tokens),
    ws: (tokens: Tokens) => socketDriver(h, 'ws', tokens),
    tcp: (tokens: Tokens) => socketDriver(h, 'tcp', tokens),
  } as const;

  for (const [name, make] of Object.entries(transports)) {
    describe(name, () => {
      let driver: Driver;
      const realm = `seed-${name}`;
      before(async () => {
        driver = make({ own: (await makeRealm(h.url, realm)).write, r1 });
      });
      after(async () => {
        await driver.close();
      });

      for (const exchange of exchanges) {
        it(exchange.name, async () => {
          const got = await driver.send(exchange, realm);
          if (exchange.replies.length === 0) {
            assert.equal(got, null, `no reply is due: ${JSON.stringify(got)}`);
            return;
          }
          assert.ok(got !== null, 'a reply');
          assert.ok(matchesJson(got, exchange.replies), `got ${JSON.stringify(got)}\nexpected ${JSON.stringify(exchange.replies)}`);
          for (const reply of got as Json[]) assert.equal('cid' in reply, false, 'no cid in a reply to a message without one');
        });
      }
    });
  }
});
