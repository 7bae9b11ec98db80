/**
 * One API process's instruction side, built from the real parts over a SQLite file: store,
 * local bus, services, delivery queue and log, and the instruction runtime. Several can share
 * one file (a restart is a new one on the same file; two at once are two processes competing
 * for the leases). Log events are collected as the bus carries them.
 */
import type { Logger } from 'pino';
import { defaultTenant } from '../../internal/auth/principal.js';
import { testConfig, type Config } from '../../internal/config/config.js';
import type { InstructionLogEvent } from '../../internal/domain/events.js';
import type { Realm, TrackedObject } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import type { DeliveryParts } from '../../internal/instructions/delivery/delivery-setup.js';
import type { InstructionRuntime } from '../../internal/instructions/engine/instruction-runtime.js';
import type { RealmEngine } from '../../internal/instructions/engine/realm-engine.js';
import { createLogger } from '../../internal/observability/logger.js';
import { InstructionMetrics } from '../../internal/observability/metrics/instruction-metrics.js';
import { MetricsRegistry } from '../../internal/observability/metrics/registry.js';
import { RealmLabels } from '../../internal/observability/metrics/realm-labels.js';
import type { RealmChange } from '../../internal/service/change-feed.js';
import type { ChangeListener } from '../../internal/service/changes.js';
import { systemClock } from '../../internal/service/clock.js';
import { buildServices, type Services } from '../../internal/startup/services.js';
import type { LeaseStore, Store } from '../../internal/store/port.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

export interface InstructionProcess {
  store: Store;
  services: Services;
  runtime: InstructionRuntime;
  metrics: MetricsRegistry;
  delivery: DeliveryParts;
  logs: InstructionLogEvent['entry'][];
  /** Every change this process stored, with its origin. */
  changes: RealmChange[];
  realm(name: string): Promise<Realm>;
  /** Creates an instruction as a client does (the runtime hears of it). */
  instruct(realm: Realm, id: string, source: string): Promise<void>;
  object(realm: Realm, id: string): Promise<TrackedObject | null>;
  /** The engine of a realm once this process evaluates it and has loaded it. */
  engine(realm: Realm, timeoutMs?: number): Promise<RealmEngine>;
  /** Waits until the realm's engine has done everything asked of it so far. */
  settle(realm: Realm): Promise<void>;
  close(): Promise<void>;
}

export interface ProcessOptions {
  processId: string;
  config?: Partial<Config>;
  /** Wraps the lease store (a test cuts a process off from it). */
  leases?: (leases: LeaseStore) => LeaseStore;
  logger?: Logger;
  /** False: the runtime is built but never started (a process that only writes). */
  runtime?: boolean;
}

export async function waitFor<T>(what: string, probe: () => T | null | undefined | Promise<T | null | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined && (value as unknown) !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function startInstructionProcess(dbPath: string, options: ProcessOptions): Promise<InstructionProcess> {
  const config = testConfig({
    store: `sqlite:${dbPath}`,
    instructionLeaseTtlMs: 1000,
    instructionLeaseRenewMs: 200,
    ...options.config,
  });
  const logger = options.logger ?? createLogger('silent');
  const opened = openSqliteStore(dbPath);
  const store: Store = options.leases === undefined ? opened : Object.assign(Object.create(opened) as Store, { leases: options.leases(opened.leases) });
  const bus = new LocalEventBus();
  const changes: RealmChange[] = [];
  const metrics = new MetricsRegistry({ realmLabel: true });
  const recorder: ChangeListener = {
    objectsChanged: (_realm, c) => {
      for (const change of c) changes.push({ kind: 'object', change });
    },
    areaChanged: (_realm, change) => {
      changes.push({ kind: 'area', change });
    },
    realmDeleted: () => undefined,
  };
  const services = buildServices({ ...config, processId: options.processId }, store, bus, systemClock, logger, null, recorder, {
    registry: metrics,
    observer: new InstructionMetrics(metrics, new RealmLabels(100)),
  });
  const runtime = services.instructionRuntime;
  const delivery = services.delivery;
  const logs: InstructionLogEvent['entry'][] = [];
  const listened = new Set<string>();
  const proc: InstructionProcess = {
    store,
    services,
    runtime,
    metrics,
    delivery,
    logs,
    changes,
    async realm(name) {
      const key = name;
      const realm = (await services.realms.find(key)) ?? (await services.realms.put(defaultTenant, name, undefined)).realm;
      if (!listened.has(realm.id)) {
        listened.add(realm.id);
        bus.subscribe(realm.id, (message) => {
          if (message.kind !== 'events') return;
          for (const event of message.events) if (event.kind === 'log') logs.push(event.entry);
        });
      }
      return realm;
    },
    async instruct(realm, id, source) {
      await services.instructions.create(realm, id, { label: id, instruction: source });
    },
    object: (realm, id) => store.objects.get(realm.id, id),
    engine: (realm, timeoutMs = 5000) => waitFor(`the engine of ${realm.id} on ${options.processId}`, () => runtime.engineOf(realm.id), timeoutMs),
    async settle(realm) {
      const engine = await proc.engine(realm);
      // The bus delivers on a later turn: let what was published reach the engine, then wait.
      for (let round = 0; round < 3; round++) {
        await new Promise((resolve) => setImmediate(resolve));
        await engine.idle();
      }
    },
    async close() {
      await runtime.close();
      await delivery.close();
      services.control.close();
      services.presence.close();
      await bus.close();
      await opened.close();
    },
  };
  if (options.runtime !== false) runtime.start();
  return Promise.resolve(proc);
}
