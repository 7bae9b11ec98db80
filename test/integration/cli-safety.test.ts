/**
 * The admin CLI's guard rails: help, naming the store it opened, never creating a store
 * unasked, `realm create` refusing an existing realm, and `realm delete` asking first.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { runCli, type CliOutput } from '../../internal/cli/admin-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'locus-cli-safety-'));
const bin = new URL('../../cmd/cli.js', import.meta.url).pathname;

interface Run {
  code: number;
  out: string;
  err: string;
  /** Questions the CLI asked on the (fake) terminal. */
  asked: string[];
}

async function cli(store: string, argv: string[], terminal: { answer: string } | null = null): Promise<Run> {
  const run: Run = { code: 0, out: '', err: '', asked: [] };
  const io: CliOutput = {
    out: (l) => (run.out += l + '\n'),
    err: (l) => (run.err += l + '\n'),
    ...(terminal === null
      ? {}
      : {
          isTTY: true,
          prompt: (question: string) => {
            run.asked.push(question);
            return Promise.resolve(terminal.answer);
          },
        }),
  };
  run.code = await runCli(argv, { LOCUS_STORE: store }, io);
  return run;
}

/** A new store holding realm `fleet`. */
async function storeWithFleet(name: string): Promise<string> {
  const store = `sqlite:${join(dir, name)}`;
  const created = await cli(store, ['realm', 'create', 'fleet', '--create', '--connection-timeout', '45']);
  assert.equal(created.code, 0, created.err);
  return store;
}

async function realmIds(store: string): Promise<string[]> {
  const list = await cli(store, ['realm', 'list']);
  assert.equal(list.code, 0, list.err);
  return Object.keys(JSON.parse(list.out) as object);
}

after(() => rmSync(dir, { recursive: true, force: true }));

describe('admin CLI help', () => {
  const store = `sqlite:${join(dir, 'unused.db')}`;

  it('prints the usage to stdout with exit 0 for --help, -h and help', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const run = await cli(store, argv);
      assert.equal(run.code, 0, argv.join(' '));
      assert.match(run.out, /^usage:\n {2}locus serve/);
      assert.equal(run.err, '');
    }
    assert.ok(!existsSync(join(dir, 'unused.db')), 'help opens no store');
  });

  it('prints a page per command group: help realm, help token, help serve, realm --help', async () => {
    assert.match((await cli(store, ['help', 'realm'])).out, /locus realm update <realm>[\s\S]*--yes/);
    assert.match((await cli(store, ['help', 'token'])).out, /locus token revoke <realm> <tokenId>/);
    assert.match((await cli(store, ['help', 'serve'])).out, /--http-port +LOCUS_HTTP_PORT +default 8080/);
    const realm = await cli(store, ['realm', '--help']);
    assert.equal(realm.code, 0);
    assert.match(realm.out, /locus realm create <realm>/);
    const unknown = await cli(store, ['help', 'fleet']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /no help on "fleet"/);
  });

  it('prints the usage to stderr with exit 2 when given nothing', async () => {
    const run = await cli(store, []);
    assert.equal(run.code, 2);
    assert.equal(run.out, '');
    assert.match(run.err, /^usage:/);
  });

  it('answers `locus serve --help` without starting a server', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'serve', '--help'], { timeout: 10_000 });
    assert.match(stdout, /^usage: locus serve/);
  });
});

describe('admin CLI store', () => {
  it('names the store it opened on stderr, keeping stdout JSON', async () => {
    const store = await storeWithFleet('named.db');
    const run = await cli(store, ['realm', 'list']);
    assert.equal(run.err, `locus: store sqlite:${join(dir, 'named.db')}\n`);
    assert.deepEqual(Object.keys(JSON.parse(run.out) as object), ['fleet']);
  });

  it('does not create a missing store unless given --create', async () => {
    const file = join(dir, 'absent.db');
    const run = await cli(`sqlite:${file}`, ['realm', 'list']);
    assert.equal(run.code, 1);
    assert.match(run.err, new RegExp(`no store at ${file}: start the server once to create it, or pass --create`));
    assert.ok(!existsSync(file));
    const created = await cli(`sqlite:${file}`, ['realm', 'list', '--create']);
    assert.equal(created.code, 0, created.err);
    assert.deepEqual(JSON.parse(created.out), {});
    assert.ok(existsSync(file));
  });

  it('run from another directory, does not make a new ./data/locus.db there', async () => {
    const cwd = mkdtempSync(join(dir, 'elsewhere-'));
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.LOCUS_STORE;
    const failed = await promisify(execFile)(process.execPath, [bin, 'realm', 'list'], { cwd, env }).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    assert.ok(failed !== null, 'the command fails');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, new RegExp(`locus: store sqlite:${join(cwd, 'data', 'locus.db')}\nlocus: no store at`));
    assert.ok(!existsSync(join(cwd, 'data')));
  });

  it('resolves --store through the server configuration, which checks it', async () => {
    const run = await cli('sqlite::memory:', ['realm', 'list', '--store', 'postgres://x']);
    assert.equal(run.code, 1);
    assert.match(run.err, /must be sqlite:<path> .*got "postgres:\/\/x"/);
    const missingDir = await cli('sqlite::memory:', ['realm', 'list', '--create', '--store', `sqlite:${join(dir, 'nodir', 'x.db')}`]);
    assert.equal(missingDir.code, 1);
    assert.match(missingDir.err, /directory .*nodir does not exist/);
  });
});

describe('admin CLI realm create, update and delete', () => {
  it('refuses to create a realm that exists, changing nothing', async () => {
    const store = await storeWithFleet('conflict.db');
    const again = await cli(store, ['realm', 'create', 'fleet', '--connection-timeout', '90']);
    assert.equal(again.code, 1);
    assert.match(again.err, /realm with id fleet already exists/);
    assert.equal(again.out, '');
    const shown = JSON.parse((await cli(store, ['realm', 'show', 'fleet'])).out) as { settings: { connectionTimeout: number } };
    assert.equal(shown.settings.connectionTimeout, 45);
  });

  it('updates settings of an existing realm only', async () => {
    const store = await storeWithFleet('update.db');
    const updated = await cli(store, ['realm', 'update', 'fleet', '--history-retention-days', '7']);
    assert.equal(updated.code, 0, updated.err);
    assert.deepEqual(JSON.parse(updated.out), {
      id: 'fleet',
      result: 'success',
      settings: { connectionTimeout: 45, historyRetentionDays: 7, rateLimit: null },
    });
    const missing = await cli(store, ['realm', 'update', 'ghost', '--rate-limit', '5']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /unknown realm ghost/);
    assert.deepEqual(await realmIds(store), ['fleet']);
  });

  it('does not delete without --yes when not on a terminal', async () => {
    const store = await storeWithFleet('noyes.db');
    const run = await cli(store, ['realm', 'delete', 'fleet']);
    assert.equal(run.code, 1);
    assert.match(run.err, /pass --yes/);
    assert.deepEqual(await realmIds(store), ['fleet']);
  });

  it('on a terminal, deletes only when the realm id is typed', async () => {
    const store = await storeWithFleet('prompt.db');
    const refused = await cli(store, ['realm', 'delete', 'fleet'], { answer: 'y' });
    assert.equal(refused.code, 1);
    assert.match(refused.asked[0] ?? '', /Delete realm fleet .*Type fleet to confirm/);
    assert.match(refused.err, /not confirmed; realm fleet was not deleted/);
    assert.deepEqual(await realmIds(store), ['fleet']);

    const confirmed = await cli(store, ['realm', 'delete', 'fleet'], { answer: 'fleet\n' });
    assert.equal(confirmed.code, 0, confirmed.err);
    assert.deepEqual(JSON.parse(confirmed.out), { id: 'fleet', result: 'success' });
    assert.deepEqual(await realmIds(store), []);
  });

  it('deletes with --yes without asking, and reports a missing realm before asking', async () => {
    const store = await storeWithFleet('yes.db');
    const missing = await cli(store, ['realm', 'delete', 'ghost'], { answer: 'ghost' });
    assert.equal(missing.code, 1);
    assert.deepEqual(missing.asked, []);
    assert.match(missing.err, /unknown realm ghost/);
    const run = await cli(store, ['realm', 'delete', 'fleet', '--yes'], { answer: 'no' });
    assert.equal(run.code, 0, run.err);
    assert.deepEqual(run.asked, []);
    assert.deepEqual(await realmIds(store), []);
  });
});
