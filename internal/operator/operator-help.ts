/**
 * `node dist/cmd/operator.js --help`: the operator takes no arguments, only environment
 * variables (operator-config.ts), so its help is that list.
 */
export const operatorUsage = `usage: node dist/cmd/operator.js
The locus Kubernetes operator: turns Realm resources (locus.dev/v1alpha1) into realms,
tokens and signing keys in the API processes' store, with one leader elected through a Lease.
It takes no arguments; it is configured by environment variables:
  LOCUS_STORE                              the API processes' store (as the server)
  LOCUS_BUS                                the API processes' bus (as the server)
  LOCUS_OPERATOR_HOST                      address of /healthz, /readyz, /metrics (default 0.0.0.0)
  LOCUS_OPERATOR_PORT                      their port (default 8081)
  LOCUS_OPERATOR_NAMESPACES                comma list of namespaces to watch (default: all)
  LOCUS_OPERATOR_LEASE_NAMESPACE           namespace of the leader-election Lease (default: the
                                           Kubernetes context's namespace, a Pod's own; else default)
  LOCUS_OPERATOR_IDENTITY                  the Lease holder's name (default: host name and pid)
  LOCUS_OPERATOR_WORKERS                   reconciles at once (default 4)
  LOCUS_OPERATOR_RESYNC_SECONDS            full resync period (default 300)
  LOCUS_OPERATOR_LEASE_DURATION_SECONDS    Lease duration (default 15)
  LOCUS_OPERATOR_RENEW_DEADLINE_SECONDS    a leader that could not renew for this long stops (default 10)
  LOCUS_OPERATOR_RETRY_PERIOD_SECONDS      how often to try to take or renew the Lease (default 2)
  LOCUS_OPERATOR_KEY_GRACE_SECONDS         how long a rotated-out key is still accepted (default 86400)
  LOCUS_OPERATOR_CREDENTIALS_GRACE_SECONDS how long superseded Realm credentials are still accepted (default 3600)
  LOCUS_OPERATOR_BACKOFF_BASE_MS           first retry delay after a failure (default 500)
  LOCUS_OPERATOR_BACKOFF_CAP_MS            longest retry delay (default 300000)
  LOCUS_SHUTDOWN_TIMEOUT_MS                graceful shutdown deadline (default 15000)
  LOCUS_LOG_LEVEL                          log level (default info)
The Kubernetes connection comes from KUBECONFIG, or in a Pod from its ServiceAccount.
More: docs/operations.md, "Kubernetes operator".
`;
