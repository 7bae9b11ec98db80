/**
 * Starts the OpenTelemetry Node SDK as the standard OTEL_* environment configures it
 * (exporter, OTLP endpoint and protocol, sampler, propagators, resource), when it asks for
 * traces at all (tracing-wanted.ts); otherwise nothing is loaded or installed. Traces only:
 * no instrumentation library is registered (locus makes its own spans), no metric reader
 * (metrics are prom-client's) and no log exporter. Several servers of one process share one
 * SDK, shut down (flushing what is left) when the last of them closes.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { Tracing } from './tracing.js';
import { tracingWanted, type TracingDecision } from './tracing-wanted.js';

type Env = Readonly<Record<string, string | undefined>>;

interface Sdk {
  shutdown(): Promise<void>;
}

let shared: { sdk: Promise<Sdk>; users: number } | null = null;

/**
 * The longest the SDK's shutdown (the last export) may hold the server's: it runs within the
 * part of LOCUS_SHUTDOWN_TIMEOUT_MS kept for closing (at most 2 s), and a collector that does
 * not answer must not turn a clean stop into a failed one.
 */
const shutdownBudgetMs = 1000;

/** Resolves with `work`, or rejects once `ms` have passed. */
function within(ms: number, work: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms; spans not yet exported are lost`)), ms);
    timer.unref();
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** True when OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names the service: otherwise it is `locus`. */
function serviceNamed(env: Env): boolean {
  return (env.OTEL_SERVICE_NAME ?? '').trim() !== '' || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
}

async function startSdk(env: Env): Promise<Sdk> {
  const { NodeSDK, resources } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
    // Not the process detector unless asked for (OTEL_NODE_RESOURCE_DETECTORS): its
    // `process.command_args` would send a token given on the command line to the collector.
    ...((env.OTEL_NODE_RESOURCE_DETECTORS ?? '').trim() === '' ? { resourceDetectors: [resources.envDetector, resources.hostDetector] } : {}),
    ...(serviceNamed(env) ? {} : { serviceName: 'locus' }),
  });
  sdk.start();
  return {
    shutdown: async () => {
      try {
        await within(shutdownBudgetMs, sdk.shutdown(), 'the OpenTelemetry SDK shutdown');
      } finally {
        // A later start in this process (a restart in tests) registers afresh.
        trace.disable();
        propagation.disable();
        context.disable();
      }
    },
  };
}

/** The process's tracing as `env` asks for it, with the decision; null tracing when off. */
export async function startTracing(env: Env): Promise<{ tracing: Tracing | null; decision: TracingDecision }> {
  const decision = tracingWanted(env);
  if (!decision.on) return { tracing: null, decision };
  const held = (shared ??= { sdk: startSdk(env), users: 0 });
  held.users++;
  let sdk: Sdk;
  try {
    sdk = await held.sdk;
  } catch (err) {
    held.users--;
    if (shared === held) shared = null;
    throw err;
  }
  let closed = false;
  const tracing = new Tracing(trace.getTracer('locus'), async () => {
    if (closed) return;
    closed = true;
    if (--held.users > 0) return;
    if (shared === held) shared = null;
    await sdk.shutdown();
  });
  return { tracing, decision };
}
