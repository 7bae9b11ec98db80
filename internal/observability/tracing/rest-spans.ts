/**
 * One SERVER span per REST request, parented on an incoming trace context (OTEL_PROPAGATORS;
 * W3C `traceparent` by default). Named `METHOD /route/template` once the route is known,
 * with the method, route template, status code and realm id: never the raw path or query
 * (they hold object ids and may hold a token), a header or a body. Health probes are not traced.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { realmIdOf } from '../../transport/rest/access-log.js';
import { routeTemplateOf } from '../../transport/rest/request-context.js';

/** Probes of load balancers and the kubelet come every few seconds: a trace each would only be noise. */
const probes: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/health-check']);

export function restSpans(tracer: Tracer): RequestHandler {
  return (req, res, next) => {
    if (probes.has(req.path)) {
      next();
      return;
    }
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    const active = trace.setSpan(parent, span);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      const route = routeTemplateOf(req, res);
      if (route !== null) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      const realm = realmIdOf(res);
      if (realm !== undefined) span.setAttribute('locus.realm', realm);
      if (!res.writableFinished) span.setAttribute('locus.aborted', true);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    // Listeners of the response (the access log's line among them) run in the span's context.
    context.bind(active, res);
    res.once('finish', end);
    res.once('close', end);
    context.with(active, next);
  };
}
