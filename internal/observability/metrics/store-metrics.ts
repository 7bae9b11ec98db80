/**
 * The store, metered: a decorator of the Store port that times every call of every
 * sub-store method, as `locus_store_operation_duration_seconds{operation="objects.upsertMany",
 * outcome="ok"|"error"}`. The cells of each operation are looked up once, at its first call;
 * a call costs two clock reads and one observe.
 */
import type { AreaStore, InstructionStore, LeaseStore, ObjectStore, RealmStore, SigningKeyStore, Store, TenantStore, TokenStore } from '../../store/port.js';
import type { HistogramCell, LeanHistogram } from './lean-series.js';

/** The methods of each sub-store, as the port names them (the compiler holds the lists to the port). */
const operations = {
  realms: ['put', 'create', 'update', 'get', 'list', 'delete'] satisfies (keyof RealmStore)[],
  tokens: ['create', 'findByHash', 'listByRealm', 'delete'] satisfies (keyof TokenStore)[],
  tenants: ['create', 'get', 'list', 'delete'] satisfies (keyof TenantStore)[],
  signingKeys: ['create', 'get', 'listByTenant', 'delete'] satisfies (keyof SigningKeyStore)[],
  objects: ['upsertMany', 'get', 'list', 'delete', 'search', 'history', 'pruneHistory'] satisfies (keyof ObjectStore)[],
  areas: ['create', 'update', 'get', 'list', 'delete'] satisfies (keyof AreaStore)[],
  instructions: [
    'create',
    'get',
    'list',
    'count',
    'update',
    'delete',
    'realmsWithInstructions',
    'members',
    'applyMembership',
    'pending',
    'completePending',
    'recordAttempt',
  ] satisfies (keyof InstructionStore)[],
  leases: ['acquire', 'release'] satisfies (keyof LeaseStore)[],
} as const;

// Every method of every sub-store is timed: a method added to the port and not here fails to compile.
type Missing<S, Listed> = Exclude<keyof S, Listed>;
type Exhaustive = [
  Missing<RealmStore, (typeof operations.realms)[number]>,
  Missing<TokenStore, (typeof operations.tokens)[number]>,
  Missing<TenantStore, (typeof operations.tenants)[number]>,
  Missing<SigningKeyStore, (typeof operations.signingKeys)[number]>,
  Missing<ObjectStore, (typeof operations.objects)[number]>,
  Missing<AreaStore, (typeof operations.areas)[number]>,
  Missing<InstructionStore, (typeof operations.instructions)[number]>,
  Missing<LeaseStore, (typeof operations.leases)[number]>,
];
const exhaustive: Exhaustive extends never[] ? true : false = true;
void exhaustive;

type AnyAsync = (...args: never[]) => Promise<unknown>;

/** The operation names the decorator reports (`objects.upsertMany`, …, `ping`). */
export function storeOperations(): string[] {
  return [...Object.entries(operations).flatMap(([group, methods]) => methods.map((m) => `${group}.${m}`)), 'ping'];
}

/** `fn` timed; its two series appear at their first call. */
function timed<F extends AnyAsync>(fn: F, histogram: LeanHistogram, operation: string): F {
  let ok: HistogramCell | null = null;
  let failed: HistogramCell | null = null;
  const settled = (cell: HistogramCell, started: number): void => cell.observe((performance.now() - started) / 1000);
  // The caller gets the store's own promise (no async wrapper: no extra promise or tick on its
  // path); the time is taken on a branch of it, which also handles its rejection for itself.
  const wrapped = (...args: Parameters<F>): Promise<unknown> => {
    const started = performance.now();
    let result: Promise<unknown>;
    try {
      result = fn(...args);
    } catch (err) {
      // A method that throws before it returns a promise: timed and turned into a rejection,
      // as an async wrapper would.
      settled((failed ??= histogram.cell(operation, 'error')), started);
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    result.then(
      () => settled((ok ??= histogram.cell(operation, 'ok')), started),
      () => settled((failed ??= histogram.cell(operation, 'error')), started),
    );
    return result;
  };
  return wrapped as F;
}

function meterGroup<S extends object>(inner: S, group: string, methods: readonly string[], histogram: LeanHistogram): S {
  const out: Record<string, unknown> = {};
  for (const method of methods) {
    const fn = (inner as Record<string, AnyAsync>)[method] as AnyAsync;
    out[method] = timed(fn.bind(inner), histogram, `${group}.${method}`);
  }
  return out as S;
}

/** `store` with every call timed into `histogram` (labels operation, outcome). */
export function meteredStore(store: Store, histogram: LeanHistogram): Store {
  return {
    realms: meterGroup(store.realms, 'realms', operations.realms, histogram),
    tokens: meterGroup(store.tokens, 'tokens', operations.tokens, histogram),
    tenants: meterGroup(store.tenants, 'tenants', operations.tenants, histogram),
    signingKeys: meterGroup(store.signingKeys, 'signingKeys', operations.signingKeys, histogram),
    objects: meterGroup(store.objects, 'objects', operations.objects, histogram),
    areas: meterGroup(store.areas, 'areas', operations.areas, histogram),
    instructions: meterGroup(store.instructions, 'instructions', operations.instructions, histogram),
    leases: meterGroup(store.leases, 'leases', operations.leases, histogram),
    ping: timed(() => store.ping(), histogram, 'ping'),
    close: () => store.close(),
  };
}
