/**
 * The store port with a span around every call (`store <part>.<method>`, e.g.
 * `store objects.upsertMany`), a child of the span under way. Installed only when tracing is
 * on. A failure sets the span's status and `locus.error.code`, never the message (it may
 * name ids).
 */
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { LocusError } from '../../errors.js';
import type { Store } from '../../store/port.js';

/** Every method of a part of the store, listed (the compiler checks that none is missing). */
type Methods<T> = { readonly [K in keyof T]-?: true };

const parts: { readonly [P in Exclude<keyof Store, 'ping' | 'close'>]: Methods<Store[P]> } = {
  realms: { put: true, create: true, update: true, get: true, list: true, delete: true },
  tokens: { create: true, findByHash: true, listByRealm: true, delete: true },
  tenants: { create: true, get: true, list: true, delete: true },
  signingKeys: { create: true, get: true, listByTenant: true, delete: true },
  objects: { upsertMany: true, get: true, list: true, delete: true, search: true, history: true, pruneHistory: true },
  areas: { create: true, update: true, get: true, list: true, delete: true },
  instructions: {
    create: true,
    get: true,
    list: true,
    count: true,
    update: true,
    delete: true,
    realmsWithInstructions: true,
    members: true,
    applyMembership: true,
    pending: true,
    completePending: true,
    recordAttempt: true,
  },
  leases: { acquire: true, release: true },
};

type AsyncMethod = (...args: unknown[]) => Promise<unknown>;

function failed(span: Span, err: unknown): void {
  span.setAttribute('locus.error.code', err instanceof LocusError ? err.code : 'internal');
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** `method` of `target`, called in a span of this name. */
function traced(tracer: Tracer, name: string, target: object, method: AsyncMethod): AsyncMethod {
  const options = { kind: SpanKind.CLIENT, attributes: { 'locus.store.operation': name } };
  const spanName = `store ${name}`;
  return (...args) => {
    const span = tracer.startSpan(spanName, options);
    let pending: Promise<unknown>;
    try {
      pending = method.apply(target, args);
    } catch (err) {
      failed(span, err);
      throw err;
    }
    return pending.then(
      (result) => {
        span.end();
        return result;
      },
      (err: unknown) => {
        failed(span, err);
        throw err;
      },
    );
  };
}

function tracedPart<T extends object>(tracer: Tracer, part: string, target: T, methods: Methods<T>): T {
  const wrapped: Record<string, AsyncMethod> = {};
  for (const name of Object.keys(methods)) {
    const method = (target as Record<string, unknown>)[name];
    if (typeof method !== 'function') throw new Error(`store ${part} has no method ${name}`);
    wrapped[name] = traced(tracer, `${part}.${name}`, target, method as AsyncMethod);
  }
  return wrapped as T;
}

export function tracedStore(store: Store, tracer: Tracer): Store {
  return {
    realms: tracedPart(tracer, 'realms', store.realms, parts.realms),
    tokens: tracedPart(tracer, 'tokens', store.tokens, parts.tokens),
    tenants: tracedPart(tracer, 'tenants', store.tenants, parts.tenants),
    signingKeys: tracedPart(tracer, 'signingKeys', store.signingKeys, parts.signingKeys),
    objects: tracedPart(tracer, 'objects', store.objects, parts.objects),
    areas: tracedPart(tracer, 'areas', store.areas, parts.areas),
    instructions: tracedPart(tracer, 'instructions', store.instructions, parts.instructions),
    leases: tracedPart(tracer, 'leases', store.leases, parts.leases),
    ping: traced(tracer, 'ping', store, () => store.ping()) as () => Promise<void>,
    close: () => store.close(),
  };
}
