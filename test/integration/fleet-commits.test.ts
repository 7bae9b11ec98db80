/**
 * The fleet path: many connections, each sending one write and awaiting the reply.
 * - Group commit over real sockets and a real SQLite file: writes that arrive on many
 *   connections in the same turn of the event loop share one transaction, run in arrival
 *   order (a connection's writes in its order), and each is acknowledged only once a second
 *   connection to the file sees it (committed).
 * - The server: forty v1 TCP connections, each pipelining `upd`s of its own object while the
 *   others do the same; every reply in order, each object ends where its last write put it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../internal/store/sqlite/group-commit.js';
import { makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, type V1Client } from '../support/v1-clients.js';

interface Write {
  conn: number;
  seq: number;
}

const connections = 40;

describe('group commit across connections', () => {
  const dir = mkdtempSync(join(tmpdir(), 'locus-fleet-commits-'));
  const path = join(dir, 'fleet.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (conn INTEGER NOT NULL, seq INTEGER NOT NULL)');
  const insert = db.prepare<[number, number]>('INSERT INTO t (conn, seq) VALUES (?, ?)');
  /** Another connection to the file: it sees a write only once it is committed. */
  const reader = new Database(path, { readonly: true });
  const seen = reader.prepare<[number, number], number>('SELECT count(*) FROM t WHERE conn = ? AND seq = ?').pluck();
  /** The writes of each group, as the group ran them. */
  const groups: Write[][] = [];
  const group = new GroupCommit<Write, Write, Write>(db, {
    write: (write) => {
      insert.run(write.conn, write.seq);
      groups[groups.length - 1]?.push(write);
      return write;
    },
    committed: (write) => write,
    begin: () => groups.push([]),
    rolledBack: () => undefined,
    translate: (err) => err,
    retryAlone: () => false,
    weight: () => 1,
    maxWeight: 10_000,
  });
  let server: Server;
  let port = 0;
  /** Connections the server has accepted (and reads). */
  let accepted = 0;

  before(async () => {
    // Each line `conn:seq` is one write, acknowledged by the same line once it is committed.
    server = createServer((socket) => {
      accepted++;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('utf8');
        for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
          const [conn, seq] = buffered.slice(0, at).split(':').map(Number) as [number, number];
          buffered = buffered.slice(at + 1);
          void group.submit({ conn, seq }).then((write) => socket.write(`${write.conn}:${write.seq}\n`));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    server.close();
    reader.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shares one transaction among the writes of many connections, in order, each acknowledged after its commit', async () => {
    const sockets: Socket[] = await Promise.all(
      Array.from({ length: connections }, () => new Promise<Socket>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => resolve(socket));
        socket.setNoDelay(true);
      })),
    );
    // Every connection accepted and read by the server, as a fleet's long-lived ones are.
    while (accepted < connections) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setImmediate(resolve));
    /** Per connection, the acknowledgements in the order they came, each checked against the file as it came. */
    const acks: string[][] = sockets.map(() => []);
    const uncommitted: string[] = [];
    const all = sockets.map(
      (socket, conn) =>
        new Promise<void>((resolve) => {
          let buffered = '';
          socket.on('data', (chunk) => {
            buffered += chunk.toString('utf8');
            for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
              const line = buffered.slice(0, at);
              buffered = buffered.slice(at + 1);
              const [c, s] = line.split(':').map(Number) as [number, number];
              if (seen.get(c, s) !== 1) uncommitted.push(line);
              acks[conn]?.push(line);
              if (acks[conn]?.length === 3) resolve();
            }
          });
        }),
    );
    // Round one: one write per connection, all sent in one turn. Then each connection
    // pipelines two more (one frame each, in one segment).
    sockets.forEach((socket, conn) => socket.write(`${conn}:1\n`));
    await new Promise((resolve) => setTimeout(resolve, 50));
    sockets.forEach((socket, conn) => socket.write(`${conn}:2\n${conn}:3\n`));
    await Promise.all(all);
    for (const socket of sockets) socket.destroy();

    assert.deepEqual(uncommitted, [], 'no write is acknowledged before its commit');
    acks.forEach((lines, conn) => assert.deepEqual(lines, [`${conn}:1`, `${conn}:2`, `${conn}:3`]));
    const total = groups.reduce((n, g) => n + g.length, 0);
    assert.equal(total, connections * 3);
    assert.ok(groups.length <= 8, `${groups.length} transactions for ${total} writes from ${connections} connections`);
    assert.ok(groups.some((g) => new Set(g.map((w) => w.conn)).size > connections / 2), 'one transaction holds the writes of most connections');
    // Within a transaction and across them, each connection's writes run in its order.
    const order = new Map<number, number>();
    for (const write of groups.flat()) {
      assert.ok(write.seq > (order.get(write.conn) ?? 0), `connection ${write.conn}: write ${write.seq} ran after a later one`);
      order.set(write.conn, write.seq);
    }
  });
});

describe('a fleet of v1 connections', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness();
    token = (await makeRealm(h.url, 'fleet')).write;
  });
  after(async () => {
    await h.stop();
  });

  it('each connection pipelining updates of its object: replies in order, the last write stands', async () => {
    const clients: V1Client[] = await Promise.all(Array.from({ length: connections }, () => connectTcp(h.server.tcpPort, token)));
    const write = (client: V1Client, k: number, step: number, act: 'cre' | 'upd'): void =>
      client.sendText(JSON.stringify([{ typ: 'obj', act, cid: `${k}-${step}`, id: `dev-${k}`, rea: 'fleet', loc: { lon: 5 + k / 100, lat: 45 + step / 100 } }]));
    // Every connection creates its object, awaiting the reply, all at once.
    clients.forEach((client, k) => write(client, k, 0, 'cre'));
    for (const [k, client] of clients.entries()) assert.deepEqual(await client.next(), [{ typ: 'obj', act: 'cre', cid: `${k}-0`, res: 'suc' }]);
    // Then five updates each, without waiting.
    clients.forEach((client, k) => {
      for (let step = 1; step <= 5; step++) write(client, k, step, 'upd');
    });
    for (const [k, client] of clients.entries()) {
      for (let step = 1; step <= 5; step++) assert.deepEqual(await client.next(), [{ typ: 'obj', act: 'upd', cid: `${k}-${step}`, res: 'suc' }]);
    }
    const reader = clients[0] as V1Client;
    for (let k = 0; k < connections; k++) {
      const reply = await reader.one({ typ: 'obj', act: 'rea', rea: 'fleet', id: `dev-${k}` });
      assert.equal(reply.res, 'suc', JSON.stringify(reply));
      const loc = (reply.dat as { loc: { lon: number; lat: number } }).loc;
      assert.deepEqual([loc.lon, loc.lat], [5 + k / 100, 45 + 5 / 100], `dev-${k}`);
    }
    await Promise.all(clients.map((client) => client.close()));
  });
});
