/**
 * Leader election (internal/operator/leader-election.ts) over an in-memory Lease with the API
 * server's optimistic concurrency (resourceVersion): one leader at a time, hand-over on release,
 * take-over after expiry, and a leader cut off from the API server stops working. Short
 * periods (fractions of a second) so that it runs quickly; the real API server: test/kube.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import { LeaderElector, type LeaseApi } from '../../internal/operator/leader-election.js';

class MemoryLeases {
  lease: V1Lease | null = null;
  private version = 0;
  api(reachable: () => boolean = () => true): LeaseApi {
    const check = (): void => {
      if (!reachable()) throw new Error('connection refused');
    };
    return {
      get: () => {
        check();
        return Promise.resolve(this.lease === null ? null : (JSON.parse(JSON.stringify(this.lease)) as V1Lease));
      },
      create: (_ns, lease) => {
        check();
        if (this.lease !== null) return Promise.resolve(false);
        this.lease = JSON.parse(JSON.stringify({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.version) } })) as V1Lease;
        return Promise.resolve(true);
      },
      replace: (_ns, _name, lease) => {
        check();
        if (this.lease?.metadata?.resourceVersion !== lease.metadata?.resourceVersion) return Promise.resolve(false);
        this.lease = JSON.parse(JSON.stringify({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.version) } })) as V1Lease;
        return Promise.resolve(true);
      },
    };
  }
  holder(): string | undefined {
    return this.lease?.spec?.holderIdentity;
  }
}

const quiet = { info: () => undefined, warn: () => undefined };
const settings = (identity: string): ConstructorParameters<typeof LeaderElector>[1] => ({
  namespace: 'ns',
  name: 'locus-operator',
  identity,
  durationS: 0.4,
  renewDeadlineS: 0.25,
  retryPeriodS: 0.05,
});

function elector(leases: MemoryLeases, identity: string, log: string[], reachable?: () => boolean): LeaderElector {
  return new LeaderElector(
    leases.api(reachable),
    settings(identity),
    {
      started: () => log.push(`${identity} started`),
      stopped: () => {
        log.push(`${identity} stopped`);
        return Promise.resolve();
      },
    },
    quiet,
  );
}

async function until(what: string, check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

void describe('LeaderElector', () => {
  void it('one of two leads; on stop it releases the Lease and the other takes it at its next try', async () => {
    const leases = new MemoryLeases();
    const log: string[] = [];
    const a = elector(leases, 'a', log);
    const b = elector(leases, 'b', log);
    a.start();
    await until('a leads', () => a.isLeader());
    b.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(b.isLeader(), false);
    assert.equal(leases.holder(), 'a');
    const since = Date.now();
    await a.stop();
    assert.equal(leases.holder(), '', 'released');
    await until('b leads', () => b.isLeader());
    assert.ok(Date.now() - since < 400, 'before the lease duration');
    assert.equal(leases.lease?.spec?.leaseTransitions, 1);
    await b.stop();
    assert.deepEqual(log, ['a started', 'a stopped', 'b started', 'b stopped']);
  });

  void it('a leader cut off from the API server stops after the renew deadline; the other takes over once the Lease expires', async () => {
    const leases = new MemoryLeases();
    const log: string[] = [];
    let aReachable = true;
    const a = elector(leases, 'a', log, () => aReachable);
    const b = elector(leases, 'b', log);
    a.start();
    await until('a leads', () => a.isLeader());
    b.start();
    await new Promise((resolve) => setTimeout(resolve, 100));
    aReachable = false;
    await until('a stops', () => !a.isLeader());
    await until('b leads', () => b.isLeader());
    assert.equal(leases.holder(), 'b');
    assert.deepEqual(log, ['a started', 'a stopped', 'b started']);
    aReachable = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(a.isLeader(), false, "b's renewed Lease is not taken by a");
    await a.stop();
    await b.stop();
  });

  void it('a Lease it cannot read makes it neither leader nor follower: a problem reported, logged once per change, cleared when it can again', async () => {
    const leases = new MemoryLeases();
    let forbidden = true;
    const api = leases.api();
    const denied: LeaseApi = {
      get: (ns, name) => (forbidden ? Promise.reject(new Error(`reading Lease ${ns}/${name}: HTTP 403: forbidden`)) : api.get(ns, name)),
      create: (ns, lease) => api.create(ns, lease),
      replace: (ns, name, lease) => api.replace(ns, name, lease),
    };
    const warnings: string[] = [];
    const infos: string[] = [];
    const log = {
      warn: (obj: { err?: string }) => warnings.push(obj.err ?? ''),
      info: (_obj: unknown, msg?: string) => infos.push(msg ?? ''),
    };
    const a = new LeaderElector(denied, settings('a'), { started: () => undefined, stopped: () => Promise.resolve() }, log);
    assert.equal(a.leaseProblem(), null, 'nothing known before the first try');
    a.start();
    await until('a problem', () => a.leaseProblem() !== null);
    assert.match(a.leaseProblem() ?? '', /reading Lease ns\/locus-operator: HTTP 403/);
    // Many rounds (every 50 ms), one warning.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(a.isLeader(), false);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    forbidden = false;
    await until('a leads', () => a.isLeader());
    assert.equal(a.leaseProblem(), null);
    assert.ok(infos.some((m) => /can be read and written again/.test(m)), infos.join('\n'));
    await a.stop();
  });
});
