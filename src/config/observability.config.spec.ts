import { itRejects } from '../../test/utils/config';
import { observabilityConfig } from './observability.config';

describe('observabilityConfig', () => {
  it('serves no metrics and exports no traces unless asked', () => {
    expect(observabilityConfig({})).toEqual({
      metrics: { port: null, host: '0.0.0.0' },
      tracing: { endpoint: null },
    });
    expect(observabilityConfig({ METRICS_PORT: '9464' }).metrics.port).toBe(9464);
  });

  itRejects(observabilityConfig, [
    ['METRICS_PORT', { METRICS_PORT: 'metrics' }],
    ['METRICS_PORT', { METRICS_PORT: '70000' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
  ]);
});
