/**
 * The trace id in log lines: a pino mixin that adds `trace_id` and `span_id` of the active
 * span. Until tracing starts in this process it answers a shared empty object at once, and
 * the merge strategy then hands pino the line's own fields unchanged: no lookup, no copy.
 */
import { context, trace } from '@opentelemetry/api';

let wanted = false;

const noFields: object = Object.freeze({});

/** From now on log lines look for an active span (Tracing's constructor calls it). */
export function logTraceIds(): void {
  wanted = true;
}

export function traceFields(): object {
  if (!wanted) return noFields;
  const span = trace.getSpan(context.active());
  if (span === undefined) return noFields;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** pino's merge of a line's fields with the mixin's (its default copies into the mixin's object). */
export function mergeTraceFields(fields: object, mixin: object): object {
  return mixin === noFields ? fields : Object.assign(mixin, fields);
}
