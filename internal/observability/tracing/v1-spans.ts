/**
 * Spans of the v1 protocol: one per action (`v1 <typ> <act>`; a run of writes batched into
 * one store call is one span, `locus.v1.messages` of them), SERVER on a socket and INTERNAL
 * under the REST span of `/v1/http`; and one per push to a subscriber (`websocket push`,
 * `tcp push`), a child of whatever caused it (the `bus deliver` span of the event). Typ and
 * act are named only when the handler table knows them; no id, data or token is recorded.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { ActionTracing, Begun, PushTracing } from '../../transport/actions/action-tracing.js';
import type { V1Reply } from '../../transport/actions/codec.js';
import type { SocketTransport } from '../../transport/actions/v1-observer.js';

/** The result of the replies: `locus.v1.result` (`suc`/`err`), and the error code or the count of failures. */
function settle(span: Span, replies: readonly (V1Reply | null)[]): void {
  let failed = 0;
  let worst = 0;
  for (const reply of replies) {
    if (reply?.res !== 'err') continue;
    failed++;
    if (typeof reply.erc === 'number' && reply.erc > worst) worst = reply.erc;
  }
  span.setAttribute('locus.v1.result', failed === 0 ? 'suc' : 'err');
  if (failed > 0) span.setAttribute(replies.length === 1 ? 'locus.v1.erc' : 'locus.v1.errors', replies.length === 1 ? worst : failed);
  if (worst >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function repliesOf(begun: Begun): Promise<(V1Reply | null)[]> {
  return 'reply' in begun ? begun.reply.then((reply) => [reply]) : begun.replies;
}

/** The transport as spans name it: `websocket`, `tcp` or `http`. */
const transportName = (transport: SocketTransport | undefined): 'websocket' | 'tcp' | 'http' =>
  transport === undefined ? 'http' : transport === 'ws' ? 'websocket' : transport;

export function actionSpans(tracer: Tracer): ActionTracing {
  return {
    action(message, known, count, caller, begin) {
      const transport = transportName(caller.connection?.transport);
      const attributes: Attributes = { 'locus.transport': transport };
      if (known) {
        attributes['locus.v1.typ'] = message.typ;
        attributes['locus.v1.act'] = message.act;
      }
      if (count > 1) attributes['locus.v1.messages'] = count;
      const kind = transport === 'http' ? SpanKind.INTERNAL : SpanKind.SERVER;
      const span = tracer.startSpan(known ? `v1 ${message.typ} ${message.act}` : 'v1 unknown', { kind, attributes });
      return context.with(trace.setSpan(context.active(), span), begin).then(
        (begun) => {
          void repliesOf(begun).then(
            (replies) => settle(span, replies),
            () => span.end(),
          );
          return begun;
        },
        (err: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw err;
        },
      );
    },
  };
}

export function pushSpans(tracer: Tracer): PushTracing {
  return {
    push(socket, count) {
      const transport = transportName(socket);
      const span = tracer.startSpan(`${transport} push`, { attributes: { 'locus.transport': transport, 'locus.push.messages': count } });
      return (outcome) => {
        span.setAttribute('locus.push.outcome', outcome);
        span.end();
      };
    },
  };
}
