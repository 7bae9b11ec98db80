/**
 * Instruction changes reach `ins` subscribers on every process: two servers on one SQLite file
 * with a real nats-server as their bus; instructions created, updated and deleted through one
 * process are pushed (the whole map, `ful`) to a subscriber of the other within the client's
 * 500 ms.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken } from '../support/harness.js';
import { assertSuc, connectWire, httpRequest, signToken, testSecret, uniqueId, type HivekitWire } from '../support/hivekit-wire.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { inProcessLogDestination } from '../support/test-logs.js';

const source = 'when object(type="e-scooter", charge<0.2) then set("needsCharging", true)';

describe('instructions across processes (NATS bus)', () => {
  let nats: NatsServer;
  let dir: string;
  let a: RunningServer;
  let b: RunningServer;
  let token: string;
  let wire: HivekitWire;
  const realm = uniqueId('ins-cluster');

  before(async () => {
    nats = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'locus-ins-cluster-'));
    const destination = inProcessLogDestination();
    const options = destination === undefined ? {} : { logger: createLogger('info', destination) };
    const config = testConfig({ store: `sqlite:${join(dir, 'locus.db')}`, bus: nats.url, adminToken, jwtSecret: testSecret });
    a = await start(config, options);
    b = await start(config, options);
    token = await signToken({ sub: 'cluster' });
    assertSuc(await httpRequest(a.httpUrl, token, { typ: 'rea', act: 'cre', id: realm }));
    wire = await connectWire(b.httpUrl, token);
  });
  after(async () => {
    await wire.close();
    await b.close();
    await a.close();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create, update and delete through one process each push the whole map to an ins subscriber of the other', async () => {
    const sid = uniqueId('instruction-subscription');
    const pushes = wire.watch(sid);
    assertSuc(await wire.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'ins', sty: 'rea' } }));
    const id = uniqueId('ins');
    assertSuc(await httpRequest(a.httpUrl, token, { typ: 'ins', act: 'cre', id, rea: realm, ins: source, lab: 'L', dat: { letter: 'A' } }));
    const [created] = await pushes.atLeast(1, 500);
    assert.deepEqual(created, { typ: 'sub', id: sid, uty: 'ful', ins: { [id]: { id, lab: 'L', dat: { letter: 'A' } } } });
    assertSuc(await httpRequest(a.httpUrl, token, { typ: 'ins', act: 'upd', id, rea: realm, dat: { charge: 0.5 } }));
    const updated = await pushes.atLeast(2, 500);
    assert.deepEqual((updated[1]).ins[id].dat, { letter: 'A', charge: 0.5 });
    assertSuc(await httpRequest(a.httpUrl, token, { typ: 'ins', act: 'del', id, rea: realm }));
    const deleted = await pushes.atLeast(3, 500);
    assert.deepEqual((deleted[2]).ins, {});
    await pushes.exactly(3, 200);
    assertSuc(await wire.request({ typ: 'sub', act: 'del', id: sid, rea: realm }));
  });
});
