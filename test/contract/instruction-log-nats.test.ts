/**
 * The instruction log across processes on a real nats-server: what the evaluating process
 * appends reaches every process that listens to the realm, each keeps it once (the holder its
 * own events too), in order, bounded; a process that does not listen keeps nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openNatsBus } from '../../internal/events/nats-bus.js';
import { InstructionLog } from '../../internal/instructions/delivery/instruction-log.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { eventually } from './bus-contract.js';

describe('instruction log over NATS', () => {
  let server: NatsServer;

  before(async () => {
    server = await startNatsServer();
  });

  after(async () => {
    await server.stop();
  });

  it('every listening process keeps the realm\'s latest events once each; others keep none', async () => {
    const buses = await Promise.all(['holder', 'watcher', 'idle'].map((name) => openNatsBus({ servers: [server.url], name })));
    const [holderBus, watcherBus, idleBus] = buses as [(typeof buses)[0], (typeof buses)[0], (typeof buses)[0]];
    const holder = new InstructionLog(holderBus, { size: 4 });
    const watcher = new InstructionLog(watcherBus, { size: 4 });
    const idle = new InstructionLog(idleBus, { size: 4 });
    const held = [holder.listen('fleet'), watcher.listen('fleet')];
    await Promise.all([holderBus.flush(), watcherBus.flush()]);
    for (let k = 1; k <= 6; k++) holder.append('fleet', { id: 'ins-1', lvl: k % 2 === 0 ? 'warn' : 'error', msg: `event ${k}` });
    const expected = ['event 3', 'event 4', 'event 5', 'event 6'];
    await eventually(() => watcher.recent('fleet').at(-1)?.msg === 'event 6' && holder.recent('fleet').at(-1)?.msg === 'event 6', 'both processes heard the last event');
    assert.deepEqual(watcher.recent('fleet').map((e) => e.msg), expected);
    assert.deepEqual(holder.recent('fleet').map((e) => e.msg), expected);
    assert.deepEqual(watcher.recent('fleet')[0], holder.recent('fleet')[0]);
    assert.deepEqual(idle.recent('fleet'), []);
    for (const h of held) h.unsubscribe();
    await Promise.all(buses.map((bus) => bus.close()));
  });
});
