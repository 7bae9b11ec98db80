/**
 * Spans of the event bus: `bus publish` (PRODUCER) around a publish, and `bus deliver`
 * (CONSUMER) around the delivery of a message to a process's handlers, a child of the
 * publish: in the same process through the context captured at publish, in another through
 * the W3C trace context the NATS message carries in its headers (events/nats-bus.ts).
 * A delivery whose publish was not traced gets no span (timers, presence heartbeats).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import type { BusTracing } from '../../events/bus-tracing.js';
import type { EventBus } from '../../events/port.js';

const setter = { set: (carrier: (key: string, value: string) => void, key: string, value: string): void => carrier(key, value) };
const getter = {
  get: (carrier: (key: string) => string | undefined, key: string): string | undefined => carrier(key),
  keys: (): string[] => [],
};

/** The hooks the bus adapters call (events/bus-tracing.ts). */
export function busTracing(tracer: Tracer): BusTracing {
  return {
    capture: () => context.active(),
    deliver(captured, message, run) {
      // Each message's handlers run in the context of its own publish, not in that of
      // whichever publish scheduled the delivery turn.
      const parent = (captured as Context | undefined) ?? ROOT_CONTEXT;
      if (trace.getSpan(parent) === undefined) {
        context.with(parent, run);
        return;
      }
      const span = tracer.startSpan('bus deliver', { kind: SpanKind.CONSUMER, attributes: { 'locus.bus.message': message } }, parent);
      try {
        context.with(trace.setSpan(parent, span), run);
      } finally {
        span.end();
      }
    },
    inject(set) {
      propagation.inject(context.active(), set, setter);
    },
    received(get, run) {
      context.with(propagation.extract(context.active(), get, getter), run);
    },
  };
}

/** The bus with a `bus publish` span around each publish to subscribers (presence heartbeats are not traced). */
export function tracedBus(bus: EventBus, tracer: Tracer): EventBus {
  const publishing = (attributes: Attributes, run: () => void): void => {
    const span = tracer.startSpan('bus publish', { kind: SpanKind.PRODUCER, attributes });
    try {
      context.with(trace.setSpan(context.active(), span), run);
    } finally {
      span.end();
    }
  };
  return {
    publish: (realm, events) => publishing({ 'locus.bus.message': 'events', 'locus.realm': realm, 'locus.bus.events': events.length }, () => bus.publish(realm, events)),
    publishRealmDeleted: (realm) => publishing({ 'locus.bus.message': 'realm_deleted', 'locus.realm': realm }, () => bus.publishRealmDeleted(realm)),
    publishTenant: (tenant, event) => publishing({ 'locus.bus.message': 'tenant' }, () => bus.publishTenant(tenant, event)),
    publishControl: (message) => publishing({ 'locus.bus.message': 'control' }, () => bus.publishControl(message)),
    publishLocal: (realm, events) => bus.publishLocal(realm, events),
    publishPresence: (message) => bus.publishPresence(message),
    subscribe: (realm, handler) => bus.subscribe(realm, handler),
    subscribeTenant: (tenant, handler) => bus.subscribeTenant(tenant, handler),
    subscribeControl: (handler) => bus.subscribeControl(handler),
    subscribePresence: (handler) => bus.subscribePresence(handler),
    onResync: (listener) => bus.onResync(listener),
    health: () => bus.health(),
    close: () => bus.close(),
  };
}
