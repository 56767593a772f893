import { BaseEnv } from './base.env';
import { commonConfig } from './common';
import { ConfigError, readEnv } from './env';

const REQUIRED = {
  KAFKA_BROKERS: '127.0.0.1:9093',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

function tracing(vars: Record<string, string>) {
  return commonConfig('router', readEnv(BaseEnv, { ...REQUIRED, ...vars }), 8082).tracing;
}

/** The message of the ConfigError that reading `vars` throws. */
function problems(vars: Record<string, string>): string {
  try {
    readEnv(BaseEnv, { ...REQUIRED, ...vars });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('no ConfigError');
}

describe('OTEL_* variables', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['nothing set', {}, false],
    ['an endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    ['a traces endpoint', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, true],
    ['the otlp exporter alone', { OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [
      'an endpoint with the none exporter',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' },
      false,
    ],
    [
      'an endpoint with the SDK disabled',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' },
      false,
    ],
  ])('traces with %s: on %s', (_what, vars, on) => {
    expect(tracing(vars) !== undefined).toBe(on);
  });

  it('posts to the endpoint /v1/traces, or to the traces endpoint as given', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })?.url).toBe(
      'http://c:4318/v1/traces',
    );
    expect(tracing({ OTEL_TRACES_EXPORTER: 'otlp' })?.url).toBe('http://localhost:4318/v1/traces');
    const both = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9999/traces',
    };
    expect(tracing(both)?.url).toBe('http://t:9999/traces');
  });

  it('defaults to protobuf, every trace, and the service sluice-<app>', () => {
    expect(tracing({ OTEL_TRACES_EXPORTER: 'otlp' })).toMatchObject({
      protocol: 'http/protobuf',
      sampler: 'parentbased_always_on',
      ratio: 1,
      serviceName: 'sluice-router',
    });
  });

  it('reads the sampler, its ratio, the protocol and the service name', () => {
    const vars = {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'routing',
    };
    expect(tracing(vars)).toMatchObject({
      sampler: 'parentbased_traceidratio',
      ratio: 0.1,
      protocol: 'http/json',
      serviceName: 'routing',
    });
  });

  it.each<[string, Record<string, string>]>([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '1.5' }],
    ['OTEL_TRACES_SAMPLER', { OTEL_TRACES_SAMPLER: 'sometimes' }],
    ['OTEL_TRACES_EXPORTER', { OTEL_TRACES_EXPORTER: 'zipkin' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
  ])('refuses a bad %s, naming it', (name, vars) => {
    expect(problems(vars)).toContain(name);
  });
});
