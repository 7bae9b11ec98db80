/**
 * Whether the standard OpenTelemetry environment asks for traces. Off by default: on only
 * when OTEL_TRACES_EXPORTER names an exporter other than `none`, or an OTLP endpoint is set
 * (the exporter is then OTLP); OTEL_SDK_DISABLED=true always wins. Pure: reads only `env`.
 */

export interface TracingDecision {
  on: boolean;
  /** Why, naming the variable that decided (for the start-up log line and tests). */
  reason: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** A variable's value, trimmed; undefined when unset or blank. */
function value(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
}

export function tracingWanted(env: Env): TracingDecision {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { on: false, reason: 'OTEL_SDK_DISABLED=true' };
  const exporters = value(env, 'OTEL_TRACES_EXPORTER');
  if (exporters !== undefined) {
    const named = exporters
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== '' && name !== 'none');
    return named.length > 0
      ? { on: true, reason: `OTEL_TRACES_EXPORTER=${named.join(',')}` }
      : { on: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    if (value(env, name) !== undefined) return { on: true, reason: `${name} is set` };
  }
  return { on: false, reason: 'no OTEL_TRACES_EXPORTER and no OTLP endpoint set' };
}
