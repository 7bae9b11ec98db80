/**
 * How the bus adapters carry trace context from a publish to its deliveries
 * (observability/tracing/bus-spans.ts implements it). The adapters are given one only when
 * tracing is on: with tracing off they check that it is absent and do nothing more.
 */
export interface BusTracing {
  /** The context a message published now is to be delivered in (opaque). */
  capture(): unknown;
  /**
   * Runs the delivery of a queued message to this process's handlers: in a `bus deliver`
   * span, child of what `capture` gave, when that holds a span; else just runs it.
   */
  deliver(captured: unknown, message: string, run: () => void): void;
  /** Writes the trace context of now (W3C `traceparent`, …) through `set`, for a message to other processes. */
  inject(set: (key: string, value: string) => void): void;
  /** Runs `run` in the trace context a received message's headers carry (`get` reads one header). */
  received(get: (key: string) => string | undefined, run: () => void): void;
}
