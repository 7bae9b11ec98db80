/** When the OTEL_* environment turns tracing on (observability/tracing/tracing-wanted.ts): off by default. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracingWanted } from '../../internal/observability/tracing/tracing-wanted.js';

const cases: [string, Record<string, string>, boolean][] = [
  ['nothing set', {}, false],
  ['only a service name', { OTEL_SERVICE_NAME: 'locus-eu' }, false],
  ['only a sampler and propagators', { OTEL_TRACES_SAMPLER: 'always_on', OTEL_PROPAGATORS: 'tracecontext' }, false],
  ['an exporter', { OTEL_TRACES_EXPORTER: 'otlp' }, true],
  ['a console exporter', { OTEL_TRACES_EXPORTER: 'console' }, true],
  ['exporters listed, none among them', { OTEL_TRACES_EXPORTER: 'none, otlp' }, true],
  ['exporter none', { OTEL_TRACES_EXPORTER: 'none' }, false],
  ['exporter NONE with spaces', { OTEL_TRACES_EXPORTER: ' NONE ' }, false],
  ['a blank exporter', { OTEL_TRACES_EXPORTER: '  ' }, false],
  ['an OTLP endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
  ['an OTLP traces endpoint', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
  ['a blank endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
  ['exporter none beats an endpoint', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
  ['SDK disabled beats an exporter', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, false],
  ['SDK disabled (TRUE) beats an endpoint', { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, false],
  ['SDK disabled false leaves an exporter on', { OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, true],
];

describe('tracingWanted', () => {
  for (const [name, env, on] of cases) {
    it(`${name}: ${on ? 'on' : 'off'}`, () => {
      const decision = tracingWanted(env);
      assert.equal(decision.on, on);
      assert.match(decision.reason, /OTEL_|no OTEL_TRACES_EXPORTER/);
    });
  }

  it('names the variable that decided', () => {
    assert.equal(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }).reason, 'OTEL_SDK_DISABLED=true');
    assert.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp,console' }).reason, 'OTEL_TRACES_EXPORTER=otlp,console');
    assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).reason, 'OTEL_EXPORTER_OTLP_ENDPOINT is set');
  });
});
