/**
 * The one catalogue of the metrics an API process exports on /metrics (Prometheus text
 * format). Registration (observability/metrics), the dashboards (deploy/grafana) and the alert
 * rules (deploy/prometheus) all name metrics from here, and tests hold them to it.
 *
 * Conventions (prometheus.io/docs/practices/naming): a `locus_` prefix, base units (seconds,
 * bytes), `_total` on counters, unit suffixes. Label values are bounded sets (route templates,
 * action names, status codes, kinds): never an object id, a token or a data value. The only
 * per-tenant label is `realm`, on the few series listed with it, and only while
 * LOCUS_METRICS_REALM_LABEL allows it (see docs/operations.md, "Metrics").
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly string[];
  /** Histograms only: upper bounds in the metric's unit. */
  readonly buckets?: readonly number[];
}

/** Request and action latencies: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Store and bus calls: 50 µs to 2.5 s. */
export const FAST_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5] as const;

/** sendToUrl deliveries, queue wait and retries included: 1 ms to 2 min. */
export const DELIVERY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

export const METRICS = {
  httpRequests: {
    name: 'locus_http_requests_total',
    type: 'counter',
    help: 'REST (v2) and v1-over-HTTP requests answered, by method, route template and status code.',
    labels: ['method', 'route', 'status'],
  },
  httpRequestDuration: {
    name: 'locus_http_request_duration_seconds',
    type: 'histogram',
    help: 'Time from a request arriving to its answer being written, by method, route template and status code.',
    labels: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
  },
  v1Actions: {
    name: 'locus_v1_actions_total',
    type: 'counter',
    help: 'v1 actions answered, by transport (http, ws, tcp), type, action and result code.',
    labels: ['transport', 'typ', 'act', 'status'],
  },
  v1ActionDuration: {
    name: 'locus_v1_action_duration_seconds',
    type: 'histogram',
    help: 'Time from a v1 action being read to its result being ready, by transport, type and action.',
    labels: ['transport', 'typ', 'act'],
    buckets: LATENCY_BUCKETS,
  },
  locationsIngested: {
    name: 'locus_locations_ingested_total',
    type: 'counter',
    help: 'Object writes stored that carried a location (accepted fixes, older ones included).',
    labels: ['realm'],
  },
  geofenceEvents: {
    name: 'locus_geofence_events_total',
    type: 'counter',
    help: 'Geofence crossings found by this process, by kind (ent, exi).',
    labels: ['kind', 'realm'],
  },
  connectionsOpen: {
    name: 'locus_connections_open',
    type: 'gauge',
    help: 'Open long-lived client connections, by transport (ws, tcp).',
    labels: ['transport'],
  },
  connectionsOpened: {
    name: 'locus_connections_opened_total',
    type: 'counter',
    help: 'Client connections accepted, by transport (ws, tcp).',
    labels: ['transport'],
  },
  subscriberDrops: {
    name: 'locus_subscriber_messages_dropped_total',
    type: 'counter',
    help: 'Messages not delivered to a subscriber because its connection fell too far behind, by transport.',
    labels: ['transport'],
  },
  storeOperationDuration: {
    name: 'locus_store_operation_duration_seconds',
    type: 'histogram',
    help: 'Store calls by operation (port method) and outcome (ok, error).',
    labels: ['operation', 'outcome'],
    buckets: FAST_BUCKETS,
  },
  storeUp: {
    name: 'locus_store_up',
    type: 'gauge',
    help: '1 while the store answers its health check, 0 while it does not.',
    labels: [],
  },
  busPublishDuration: {
    name: 'locus_bus_publish_duration_seconds',
    type: 'histogram',
    help: 'Time to hand a batch of events to the event bus.',
    labels: [],
    buckets: FAST_BUCKETS,
  },
  busDeliveryLag: {
    name: 'locus_bus_delivery_lag_seconds',
    type: 'histogram',
    help: 'Time from an event being published (on any process) to its delivery to this process.',
    labels: [],
    buckets: FAST_BUCKETS,
  },
  busConnected: {
    name: 'locus_bus_connected',
    type: 'gauge',
    help: '1 while the event bus is connected (always 1 for the local bus), 0 during an outage.',
    labels: [],
  },
  busMessagesDropped: {
    name: 'locus_bus_messages_dropped_total',
    type: 'counter',
    help: 'Bus messages dropped because the outage buffer was full.',
    labels: [],
  },
  rateLimited: {
    name: 'locus_rate_limited_total',
    type: 'counter',
    help: 'Requests and actions refused by a rate limit, by protocol (rest, v1).',
    labels: ['protocol'],
  },
  authFailures: {
    name: 'locus_auth_failures_total',
    type: 'counter',
    help: 'Failed authentications, by protocol (rest, v1) and reason (missing, invalid, forbidden).',
    labels: ['protocol', 'reason'],
  },
  sendToUrlDeliveries: {
    name: 'locus_send_to_url_deliveries_total',
    type: 'counter',
    help: 'sendToUrl deliveries finished by this process, by outcome (success, failed, refused, dropped).',
    labels: ['outcome'],
  },
  sendToUrlDuration: {
    name: 'locus_send_to_url_duration_seconds',
    type: 'histogram',
    help: 'Time from a sendToUrl delivery being queued to its last answer, retries included, by outcome (success, failed).',
    labels: ['outcome'],
    buckets: DELIVERY_BUCKETS,
  },
  sendToUrlQueueDepth: {
    name: 'locus_send_to_url_queue_depth',
    type: 'gauge',
    help: 'sendToUrl deliveries waiting or under way on this process, all realms together.',
    labels: [],
  },
  realms: {
    name: 'locus_realms',
    type: 'gauge',
    help: 'Realms in the store, counted at scrape time.',
    labels: [],
  },
  instructionEvaluations: {
    name: 'locus_instruction_evaluations_total',
    type: 'counter',
    help: 'Instruction evaluations run by this process (the realm lease holder), by trigger (change, create, repair, tick).',
    labels: ['trigger', 'realm'],
  },
  instructionEntries: {
    name: 'locus_instruction_entries_total',
    type: 'counter',
    help: 'Entries that joined or left instructions\' when sets, by change (joined, left).',
    labels: ['change', 'realm'],
  },
  instructionActions: {
    name: 'locus_instruction_actions_total',
    type: 'counter',
    help: 'Instruction actions carried out, by kind (set, delete, sendToUrl) and outcome (ok, error).',
    labels: ['kind', 'outcome'],
  },
  instructionEvaluationDuration: {
    name: 'locus_instruction_evaluation_duration_seconds',
    type: 'histogram',
    help: 'Time to evaluate one batch of changes (or one rescan) against a realm\'s instructions.',
    labels: [],
    buckets: FAST_BUCKETS,
  },
  instructionDepthLimited: {
    name: 'locus_instruction_depth_limited_total',
    type: 'counter',
    help: 'Changes made by instructions at the depth limit (LOCUS_INSTRUCTION_MAX_DEPTH), which triggered no instruction.',
    labels: [],
  },
  instructionLeaseHeld: {
    name: 'locus_instruction_lease_held',
    type: 'gauge',
    help: '1 for each realm whose instruction lease this process holds (and whose instructions it evaluates).',
    labels: ['realm'],
  },
  instructionsSuspended: {
    name: 'locus_instructions_suspended',
    type: 'gauge',
    help: 'Suspended instructions of the realms this process holds (they keep failing; their records say why).',
    labels: ['realm'],
  },
  buildInfo: {
    name: 'locus_build_info',
    type: 'gauge',
    help: 'Always 1; the labels name the build this process runs.',
    labels: ['version', 'revision', 'nodejs'],
  },
} as const satisfies Record<string, MetricSpec>;

/** Reconcile durations of the Kubernetes operator: 5 ms to 60 s (store, API server and Secrets in one pass). */
export const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/**
 * The metrics of the Kubernetes operator (`dist/cmd/operator.js`, internal/operator), on its own
 * /metrics (LOCUS_OPERATOR_PORT), not on an API process's. Same conventions as METRICS.
 */
export const OPERATOR_METRICS = {
  reconciles: {
    name: 'locus_operator_reconciles_total',
    type: 'counter',
    help: 'Realm reconciles finished, by result (success, error, requeue).',
    labels: ['result'],
  },
  reconcileErrors: {
    name: 'locus_operator_reconcile_errors_total',
    type: 'counter',
    help: 'Realm reconciles that failed (retried with exponential backoff).',
    labels: [],
  },
  reconcileDuration: {
    name: 'locus_operator_reconcile_duration_seconds',
    type: 'histogram',
    help: 'Time one Realm reconcile took, failures included.',
    labels: [],
    buckets: RECONCILE_BUCKETS,
  },
  queueDepth: {
    name: 'locus_operator_queue_depth',
    type: 'gauge',
    help: 'Realms waiting in the work queue (not counting those being reconciled or waiting out a backoff).',
    labels: [],
  },
  leader: {
    name: 'locus_operator_leader',
    type: 'gauge',
    help: '1 while this operator process holds the leader Lease (and reconciles), else 0.',
    labels: [],
  },
} as const satisfies Record<string, MetricSpec>;

/** Every metric name of the operator's catalogue. */
export function operatorCatalogueNames(): string[] {
  return Object.values(OPERATOR_METRICS).map((m) => m.name);
}

/** prom-client's default metrics, all exported too (names prefixed as the library does). */
export const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'] as const;

/** Every metric name the catalogue defines (histograms as their base name). */
export function catalogueNames(): string[] {
  return Object.values(METRICS).map((m) => m.name);
}
