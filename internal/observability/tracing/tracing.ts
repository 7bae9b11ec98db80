/**
 * The tracing of one API process, on a tracer: the hooks each layer is given when tracing is
 * on (REST middleware, v1 actions and pushes, bus trace context) and the decorators of the
 * store and bus ports. With tracing off there is no Tracing at all: every layer checks that
 * its hook is absent, and nothing of the SDK is loaded.
 */
import type { Tracer } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { BusTracing } from '../../events/bus-tracing.js';
import type { EventBus } from '../../events/port.js';
import type { Store } from '../../store/port.js';
import type { ActionTracing, PushTracing } from '../../transport/actions/action-tracing.js';
import { busTracing, tracedBus } from './bus-spans.js';
import { logTraceIds } from './log-fields.js';
import { restSpans } from './rest-spans.js';
import { tracedStore } from './store-spans.js';
import { actionSpans, pushSpans } from './v1-spans.js';

export class Tracing {
  /** Express middleware: a span per REST request (mounted first). */
  readonly restRequests: RequestHandler;
  /** The v1 dispatcher's hook: a span per action. */
  readonly actions: ActionTracing;
  /** The v1 sessions' hook: a span per push to a subscriber. */
  readonly pushes: PushTracing;
  /** The bus adapters' hooks: trace context from publish to delivery. */
  readonly bus: BusTracing;

  /** `onClose`: what closing does (the SDK's shutdown, which flushes; nothing for a tracer the caller owns). */
  constructor(
    private readonly tracer: Tracer,
    private readonly onClose: () => Promise<void> = () => Promise.resolve(),
  ) {
    logTraceIds();
    this.restRequests = restSpans(tracer);
    this.actions = actionSpans(tracer);
    this.pushes = pushSpans(tracer);
    this.bus = busTracing(tracer);
  }

  /** The store with a span per call. */
  store(store: Store): Store {
    return tracedStore(store, this.tracer);
  }

  /** The bus with a span per publish. */
  eventBus(bus: EventBus): EventBus {
    return tracedBus(bus, this.tracer);
  }

  /** Ends tracing for this server: the last server of the process shuts the SDK down, sending what is left. */
  close(): Promise<void> {
    return this.onClose();
  }
}
