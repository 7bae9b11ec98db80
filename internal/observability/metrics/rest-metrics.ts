/**
 * The metrics of REST and v1-over-HTTP requests: each answered request counted and timed by
 * method, route template and status (`locus_http_requests_total`,
 * `locus_http_request_duration_seconds`), and its refusals counted: 401 and 403 as
 * authentication failures, 429 as rate limited (protocol `v1` on the v1-over-HTTP paths,
 * `rest` elsewhere). The route is the template the request matched, joined with its
 * router's mount path (`/v2/realm/:realm/object/:id`), never the path itself; a request
 * that matched no route is `unmatched`. So every label is from a bounded set. Fed by the access
 * log's finish hook (`answered`), with its duration: no listener or clock read of its own.
 */
import type { Request, Response } from 'express';
import { routeTemplateOf } from '../../transport/rest/request-context.js';
import { v1HttpPaths } from '../../transport/http/v1-http.js';
import type { CounterCell, HistogramCell, LeanCounter, LeanHistogram } from './lean-series.js';

export const UNMATCHED_ROUTE = 'unmatched';

/** What authenticate.ts notes in `res.locals.authFailure` when it refuses a request. */
export type AuthFailureReason = 'missing' | 'invalid' | 'forbidden';

interface RouteRow {
  requests: CounterCell;
  duration: HistogramCell;
  /** The refusal this status counts as, if any. */
  refusal: CounterCell | null;
}

export interface RestSeries {
  requests: LeanCounter;
  duration: LeanHistogram;
  rateLimited: LeanCounter;
  authFailures: LeanCounter;
}

/** The route template of an answered request (see the module comment). */
export function routeLabel(req: Request, res: Response): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (route !== undefined && Array.isArray(route.path)) {
    const paths = route.path as unknown[];
    const base = (res.locals.routeBase as string | undefined) ?? '';
    const matched = paths.find((p) => p === req.path) ?? paths[0];
    return typeof matched === 'string' ? base + matched : UNMATCHED_ROUTE;
  }
  return routeTemplateOf(req, res) ?? UNMATCHED_ROUTE;
}

export class RestMetrics {
  private readonly rows = new Map<string, RouteRow>();
  private readonly v1Paths: ReadonlySet<string> = new Set(v1HttpPaths);

  constructor(private readonly series: RestSeries) {}

  /** An answered request (see AnsweredRequestObserver), `seconds` after it came in. */
  readonly answered = (req: Request, res: Response, seconds: number): void => {
    const status = res.statusCode;
    const route = routeLabel(req, res);
    const key = `${req.method} ${status} ${route}`;
    let row = this.rows.get(key);
    if (row === undefined) {
      row = this.newRow(req.method, route, status, res);
      // Refusals of 401 differ by reason: kept per request, not in the row.
      if (status !== 401) this.rows.set(key, row);
    }
    row.requests.inc();
    row.duration.observe(seconds);
    row.refusal?.inc();
  };

  private newRow(method: string, route: string, status: number, res: Response): RouteRow {
    const code = String(status);
    const protocol = this.v1Paths.has(route) ? 'v1' : 'rest';
    let refusal: CounterCell | null = null;
    if (status === 429) refusal = this.series.rateLimited.cell(protocol);
    else if (status === 403) refusal = this.series.authFailures.cell(protocol, 'forbidden');
    else if (status === 401) {
      const reason = (res.locals.authFailure as AuthFailureReason | undefined) === 'missing' ? 'missing' : 'invalid';
      refusal = this.series.authFailures.cell(protocol, reason);
    }
    return { requests: this.series.requests.cell(method, route, code), duration: this.series.duration.cell(method, route, code), refusal };
  }
}
