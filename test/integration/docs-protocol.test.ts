/**
 * Runs every example of docs/protocol.md, in order, against a fresh server: `v1` blocks
 * over one TCP connection (`→` sent, `←` the next frame received, compared as JSON
 * where "…" matches any value; a frame that gets no reply, such as a successful `set`,
 * shows as the next `←` belonging to a later `→`), and `sh` blocks (curl against /v1/http
 * and /api/v1) whose output must equal the `json` block that follows. `$TOKEN` is a write
 * token of realm `demo`; `$JWT` a tenant JWT `{"sub":"docs"}` signed (HS256) with the
 * server's LOCUS_JWT_SECRET, `docs-secret`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { matchesJson } from '../support/json-match.js';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);

type Example = { kind: 'v1'; lines: string[]; line: number } | { kind: 'sh'; command: string; expected: unknown; line: number };

function extract(markdown: string): Example[] {
  const examples: Example[] = [];
  const pattern = /```v1\n([\s\S]*?)```|```sh\n([\s\S]*?)```\n```json\n([\s\S]*?)```/g;
  for (const match of markdown.matchAll(pattern)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    const [, v1, command, expected] = match;
    if (v1 !== undefined) examples.push({ kind: 'v1', lines: v1.trim().split('\n'), line });
    else examples.push({ kind: 'sh', command: command ?? '', expected: JSON.parse(expected ?? 'null') as unknown, line });
  }
  return examples;
}

/** A TCP connection read line by line. */
class LineClient {
  private buffered = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let at = this.buffered.indexOf('\n'); at !== -1; at = this.buffered.indexOf('\n')) {
        this.lines.push(this.buffered.slice(0, at));
        this.buffered = this.buffered.slice(at + 1);
      }
      this.wake?.();
    });
  }

  send(text: string): void {
    this.socket.write(text + '\n');
  }

  async next(): Promise<string> {
    const deadline = Date.now() + 5000;
    while (this.lines.length === 0) {
      if (Date.now() > deadline) throw new Error('no message within 5 s');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.lines.shift() as string;
  }
}

describe('docs/protocol.md examples', () => {
  const markdown = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
  const examples = extract(markdown);
  let h: Harness;
  let token: string;
  let jwt: string;
  let client: LineClient;
  let socket: Socket;

  before(async () => {
    h = await startHarness({ demoRealm: true, jwtSecret: 'docs-secret' });
    const demo = h.server.demoToken;
    assert.ok(demo);
    token = demo.token;
    jwt = await new SignJWT({ sub: 'docs' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode('docs-secret'));
    socket = connect({ port: h.server.tcpPort, host: '127.0.0.1' });
    await new Promise((resolve) => socket.once('connect', resolve));
    client = new LineClient(socket);
  });
  after(async () => {
    socket.destroy();
    await h.stop();
  });

  it('has examples of every action family and of events', () => {
    const text = examples.map((e) => (e.kind === 'v1' ? e.lines.join('\n') : e.command)).join('\n');
    for (const part of ['"typ":"obj"', '"typ":"are"', '"typ":"sys"', '"typ":"sub"', '"typ":"evt"', 'Bearer $TOKEN', '/v1/http', '/api/v1', '"act":"hbt"', '"act":"set"', '"typ":"rea"', '"typ":"his"', '"act":"sea"', '"act":"pub"', 'Bearer $JWT']) {
      assert.ok(text.includes(part), `no example with ${part}`);
    }
  });

  for (const example of examples) {
    const first = example.kind === 'v1' ? (example.lines[0] ?? '') : example.command.split('\n')[0] ?? '';
    it(`docs/protocol.md line ${example.line}: ${first.slice(0, 70)}`, async () => {
      if (example.kind === 'sh') {
        const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LOCUS: h.url, TOKEN: token, JWT: jwt };
        const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', example.command], { env });
        const actual: unknown = JSON.parse(stdout);
        assert.ok(matchesJson(actual, example.expected), `got ${stdout}`);
        return;
      }
      for (const line of example.lines) {
        const text = line.slice(2).replaceAll('$TOKEN', token).replaceAll('$JWT', jwt);
        if (line.startsWith('→ ')) {
          client.send(text);
        } else if (line.startsWith('← ')) {
          const received = await client.next();
          assert.ok(matchesJson(JSON.parse(received), JSON.parse(text)), `expected ${text}\n     got ${received}`);
        } else {
          assert.fail(`a v1 example line must start with → or ←: ${line}`);
        }
      }
    });
  }
});
